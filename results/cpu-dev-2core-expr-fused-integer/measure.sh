#!/bin/bash
# usage: measure.sh BEFORE NEW > runs.txt ; the built-in sum runs right before each map's pair
B=$1; N=$2
for r in 1 2 3; do
  for m in 'x' 'x*2' 'abs(x)' 'x & 255' 'x > 0' 'max(x, 0)' 'x+y' 'x*y' 'x > y'; do
    echo "round $r sum [$m] $($N run --op sum --dtype i32 --n 2^25 --repeat 9 | grep time)"
    for which in before new; do
      bin=$B; [ $which = new ] && bin=$N
      out=$($bin run --map "$m" --combine sum --dtype i32 --n 2^25 --repeat 9)
      echo "$out" | grep -q "verified  yes" || echo "NOT VERIFIED $which $m"
      echo "round $r $which [$m] $(echo "$out" | grep time)"
    done
  done
done
