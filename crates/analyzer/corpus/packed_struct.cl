// __attribute__((packed)) removes the padding between fields.
// run: --global 1 --local 1 --arg out=buffer:int:2:zeros
// expect out: 5 8
typedef struct __attribute__((packed)) { char c; int i; } P;
typedef struct { char c; int i; } Q;
__kernel void k(__global int* out) {
    out[0] = sizeof(P);
    out[1] = sizeof(Q);
}
