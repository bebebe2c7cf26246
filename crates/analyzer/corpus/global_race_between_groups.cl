// The first work-item of every group writes the same element: groups are unordered.
// run: --global 128 --local 32 --arg out=buffer:int:4:zeros
__kernel void k(__global int* out) {
    if (get_local_id(0) == 0) {
        out[0] = (int)get_group_id(0); // <- global_race
    }
}
