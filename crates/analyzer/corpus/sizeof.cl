// sizeof of a type, a variable, an array, a member, an element and a dereference.
// run: --global 1 --local 1 --arg out=buffer:int:7:zeros --arg ts=buffer:uchar:48:zeros
// expect out: 28 24 20 24 24 4 1
typedef struct { int v[5]; char c; } T;
kernel void k(global int *out, global T *ts) {
    float a[7];
    T t;
    int4 q;
    out[0] = sizeof a;
    out[1] = sizeof(t);
    out[2] = sizeof(t.v);
    out[3] = sizeof(ts[0]);
    out[4] = sizeof(*ts);
    out[5] = sizeof(q.x);
    out[6] = sizeof(ts->c);
}
