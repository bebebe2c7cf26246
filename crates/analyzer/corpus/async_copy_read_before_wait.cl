// The destination of an async copy is read before the wait.
// run: --global 32 --local 32 --arg in=buffer:float:32:random --arg out=buffer:float:32:zeros --arg tile=local:float:32
__kernel void k(__global const float* in, __global float* out, __local float* tile) {
    uint l = get_local_id(0);
    event_t e = async_work_group_copy(tile, in, 32, 0);
    out[l] = tile[l]; // <- async_copy_misuse
    wait_group_events(1, &e);
}
