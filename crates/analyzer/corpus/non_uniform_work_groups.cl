// A global size of 10 in groups of 4: the last group has 2 work-items (OpenCL 2.0).
// run: --global 10 --local 4 --arg out=buffer:int:11:zeros
// expect out: 404 404 404 404 404 404 404 404 204 204 0
__kernel void k(__global int* out) {
    out[get_global_id(0)] = (int)(get_local_size(0) * 100 + get_enqueued_local_size(0));
}
