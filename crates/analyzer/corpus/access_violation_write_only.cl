// A buffer the host declared write-only is read.
// run: --global 32 --local 32 --arg in=buffer:int:32:iota --arg out=buffer:int:32:zeros:wo
__kernel void k(__global const int* in, __global int* out) {
    uint i = get_global_id(0);
    out[i] = in[i] + out[i]; // <- access_violation
}
