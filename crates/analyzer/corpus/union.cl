// A union reads a float's bits as an int.
// run: --global 1 --local 1 --arg out=buffer:int:2:zeros
// expect out: 1065353216 1
__kernel void k(__global int* out) {
    union { float f; int i; } u;
    u.f = 1.0f;
    out[0] = u.i;
    out[1] = sizeof(u) == 4;
}
