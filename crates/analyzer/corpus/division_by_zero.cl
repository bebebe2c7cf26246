// Integer division by an element that is zero.
// run: --global 32 --local 32 --arg d=buffer:int:32:zeros --arg out=buffer:int:32:zeros
__kernel void k(__global const int* d, __global int* out) {
    uint i = get_global_id(0);
    out[i] = 100 / d[i]; // <- division_by_zero
}
