// Local memory starts undefined: a slot nobody wrote is read.
// run: --global 32 --local 32 --arg out=buffer:int:32:zeros
__kernel void k(__global int* out) {
    __local int s[64];
    uint l = get_local_id(0);
    s[l] = (int)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = s[l + 32]; // <- uninitialized_local_read
}
