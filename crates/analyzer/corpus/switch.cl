// switch with fall-through, a default and a break.
// run: --global 6 --local 6 --arg out=buffer:int:6:zeros
// expect out: 11 10 20 30 30 30
__kernel void k(__global int* out) {
    uint i = get_global_id(0);
    int r = 0;
    switch (i) {
    case 0:
        r += 1;
    case 1:
        r += 10;
        break;
    case 2:
        r = 20;
        break;
    default:
        r = 30;
    }
    out[i] = r;
}
