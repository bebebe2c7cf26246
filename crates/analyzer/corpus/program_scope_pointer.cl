// A program-scope pointer initialised from a constant array.
// run: --global 3 --local 3 --arg out=buffer:int:3:zeros
// expect out: 20 30 40
__constant int table[4] = {10, 20, 30, 40};
__constant int* entry = table + 1;
__kernel void k(__global int* out) {
    out[get_global_id(0)] = entry[get_global_id(0)];
}
