// Every work-item of a group adds into one global element without atomics.
// run: --global 32 --local 32 --arg in=buffer:int:32:iota --arg out=buffer:int:1:zeros
__kernel void k(__global const int* in, __global int* out) {
    out[0] += in[get_global_id(0)]; // <- global_race
}
