// An async copy that no wait_group_events completes.
// run: --global 32 --local 32 --arg in=buffer:float:32:random --arg out=buffer:float:32:zeros --arg tile=local:float:32
__kernel void k(__global const float* in, __global float* out, __local float* tile) {
    event_t e = async_work_group_copy(tile, in, 32, 0); // <- async_copy_misuse
    out[get_local_id(0)] = 1.0f;
}
