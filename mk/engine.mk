# engine: per-file ISA flags for the AVX-512 VNNI kernel (dispatched at run time only when
# the host has VNNI; no other file gets these flags).
$(B)/core/vec_avx512vnni.o: ISA := -mavx512f -mavx512vl -mavx512bw -mavx512vnni -mfma
