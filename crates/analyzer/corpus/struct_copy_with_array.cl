// Copies of a struct that holds an array copy the array.
// run: --global 4 --local 4 --arg out=buffer:int:4:zeros
// expect out: 5 8 11 14
typedef struct { int v[4]; short tag; } A;
__kernel void k(__global int* out) {
    A a;
    for (int i = 0; i < 4; i++) a.v[i] = 3 * i;
    a.tag = 5;
    A b = a;
    A c;
    c = b;
    a.v[0] = 100;
    uint i = get_global_id(0);
    out[i] = c.v[i] + c.tag;
}
