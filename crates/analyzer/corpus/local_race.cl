// A neighbour's slot is read before the barrier that would order it.
// run: --global 64 --local 32 --arg in=buffer:int:64:iota --arg out=buffer:int:64:zeros
__kernel void k(__global const int* in, __global int* out) {
    __local int s[32];
    uint l = get_local_id(0);
    s[l] = in[get_global_id(0)];
    out[get_global_id(0)] = s[(l + 1) % 32]; // <- local_race
}
