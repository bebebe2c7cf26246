// Half of each group reaches a barrier the other half skips.
// run: --global 64 --local 32 --arg out=buffer:int:64:zeros
__kernel void k(__global int* out) {
    uint l = get_local_id(0);
    if (l < 16) {
        barrier(CLK_LOCAL_MEM_FENCE); // <- barrier_divergence
    }
    out[get_global_id(0)] = (int)l;
}
