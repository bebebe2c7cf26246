// An int4 and a struct passed by value.
// run: --global 2 --local 2 --arg out=buffer:int:2:zeros --arg v=1,2,3,4 --arg s=5,6
// expect out: 16 16
typedef struct { int a; int b; } S;
__kernel void k(__global int* out, int4 v, S s) {
    out[get_global_id(0)] = v.x + v.w + s.a + s.b;
}
