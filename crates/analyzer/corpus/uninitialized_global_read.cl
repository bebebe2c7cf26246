// The host left the buffer unwritten and the kernel reads it before writing it.
// run: --global 32 --local 32 --arg acc=buffer:int:32:uninit
__kernel void k(__global int* acc) {
    uint i = get_global_id(0);
    acc[i] = acc[i] + 1; // <- uninitialized_global_read
}
