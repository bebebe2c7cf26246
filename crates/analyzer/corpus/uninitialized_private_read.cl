// A private variable set on one path only, read on both.
// run: --global 32 --local 32 --arg out=buffer:int:32:zeros
__kernel void k(__global int* out) {
    int t;
    uint l = get_local_id(0);
    if (l < 8) t = 3;
    out[l] = t; // <- uninitialized_private_read
}
