// A buffer the host declared read-only is written.
// run: --global 32 --local 32 --arg x=buffer:int:32:iota:ro
__kernel void k(__global int* x) {
    x[get_global_id(0)] *= 2; // <- access_violation
}
