// Writing a[4] of int a[4] would land in b: private arrays are checked one by one.
// run: --global 32 --local 32 --arg out=buffer:int:32:zeros
__kernel void k(__global int* out) {
    int a[4];
    int b[4];
    for (int i = 0; i < 4; i++) { a[i] = i; b[i] = 10 * i; }
    uint l = get_local_id(0);
    a[l % 5] = 9; // <- out_of_bounds
    out[l] = a[0] + b[0];
}
