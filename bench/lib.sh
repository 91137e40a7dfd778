# Shared by bench/run_*.sh (sourced from the repository root, not run): the results file, a
# scratch folder removed on exit, and the date and machine line that every times.csv row carries
# (date,machine,version,workload,method,threads,ms; commas in the machine name become spaces).
CSV=bench/results/times.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

date_now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
machine="$(hostname -s 2>/dev/null || echo host) ${cpu:-cpu} $(nproc)c${gpu:+ + $gpu}"
machine=${machine//,/ }
