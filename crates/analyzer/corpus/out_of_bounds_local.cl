// A local array of 32 read at index 32.
// run: --global 32 --local 32 --arg out=buffer:int:32:zeros
__kernel void k(__global int* out) {
    __local int s[32];
    uint l = get_local_id(0);
    s[l] = (int)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = s[l + 1]; // <- out_of_bounds
}
