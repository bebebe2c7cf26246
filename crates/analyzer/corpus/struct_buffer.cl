// A buffer of structs (given as its bytes), read field by field.
// run: --global 2 --local 2 --arg p=buffer:uchar:16:iota --arg out=buffer:int:2:zeros
// expect out: 117835012 252579084
typedef struct { int a; int b; } Pair;
__kernel void k(__global const Pair* p, __global int* out) {
    uint i = get_global_id(0);
    out[i] = p[i].b;
}
