// 3-element vector loads and stores move three elements, not four: the element after
// the last stored triple keeps its value.
// run: --global 2 --local 2 --arg in=buffer:int:6:iota --arg out=buffer:int:7:zeros
// expect out: 0 2 4 6 8 10 0
__kernel void k(__global const int* in, __global int* out) {
    uint i = get_global_id(0);
    int3 v = vload3(i, in);
    vstore3(v * 2, i, out);
}
