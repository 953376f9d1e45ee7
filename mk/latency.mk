# latency.mk - the in-process half of bench/http/latency.py, built with everything else
# (bench/latency_inproc.c goes through the bench/%.c pattern rule of the Makefile; it is no
# bench_* suite, so bench/run.sh does not run it on its own)
all: $(B)/bench/latency_inproc
