// A loop one work-item never leaves stops within seconds with a clear error.
// run: --global 32 --local 32 --arg x=buffer:int:4:zeros
// refused: an endless loop? raise --max-warp-steps
__kernel void k(__global int* x) {
    if (get_local_id(0) == 3) {
        while (x[0] == 0) { x[1] += 1; }
    }
}
