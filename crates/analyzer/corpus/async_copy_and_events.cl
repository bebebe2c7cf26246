// An async copy into local memory, waited for, then a group sum: used correctly.
// run: --global 64 --local 32 --arg in=buffer:int:64:iota --arg out=buffer:int:2:zeros --arg tile=local:int:32
// expect out: 496 1520
__kernel void k(__global const int* in, __global int* out, __local int* tile) {
    uint g = get_group_id(0);
    event_t e = async_work_group_copy(tile, in + g * 32, 32, 0);
    wait_group_events(1, &e);
    if (get_local_id(0) == 0) {
        int s = 0;
        for (int k = 0; k < 32; k++) s += tile[k];
        out[g] = s;
    }
}
