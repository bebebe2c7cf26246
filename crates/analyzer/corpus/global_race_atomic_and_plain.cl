// Atomic increments race with a plain store to the same counter.
// run: --global 64 --local 32 --arg count=buffer:int:1:zeros
__kernel void k(__global int* count) {
    atomic_add(count, 1);
    if (get_global_id(0) == 40) {
        count[0] = 7; // <- global_race
    }
}
