#!/usr/bin/env bash
# tests/gpu/grey.sh LOGDIR — the grey conversion on the CUDA versions (called by
# tests/gpu_check.sh after the build; see tests/gpu/lib.sh): the grey cases (all 2^24 colours
# through the filter's --gray and through match on a colour source) against seq, bit for bit.
# The selftest run before it already checks all 2^24 colours on the device.
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-grey -- seq cuda-naive cuda-opt --only grey
