// A barrier with only CLK_GLOBAL_MEM_FENCE does not order local memory.
// run: --global 64 --local 32 --arg in=buffer:int:64:iota --arg out=buffer:int:64:zeros
__kernel void k(__global const int* in, __global int* out) {
    __local int s[32];
    uint l = get_local_id(0);
    s[l] = in[get_global_id(0)];
    barrier(CLK_GLOBAL_MEM_FENCE);
    out[get_global_id(0)] = s[31 - l]; // <- local_race
}
