// The last work-item writes one element past the buffer.
// run: --global 32 --local 32 --arg out=buffer:int:32:zeros
__kernel void k(__global int* out) {
    out[get_global_id(0) + 1] = 1; // <- out_of_bounds
}
