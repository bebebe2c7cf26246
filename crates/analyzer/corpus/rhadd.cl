// rhadd rounds half up and never overflows.
// run: --global 3 --local 3 --arg a=buffer:int:3:iota --arg out=buffer:int:3:zeros
// expect out: 1073741824 1073741824 1073741825
__kernel void k(__global const int* a, __global int* out) {
    uint i = get_global_id(0);
    out[i] = rhadd(a[i], 2147483647);
}
