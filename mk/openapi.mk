# openapi.mk - api/openapi.json is compiled into the binary (served at GET /openapi.json) and
# linted with the pinned @redocly/cli of tools/openapi (scripts/openapi-lint.sh, run by
# `make test`). The JSON file is the source; the C array is generated from it.
OPENAPI_C := $(B)/gen/openapi_json.c
OPENAPI_O := $(B)/gen/openapi_json.o
$(OPENAPI_C): api/openapi.json
	@mkdir -p $(@D)
	@echo "  GEN $@"
	@{ echo '/* generated from api/openapi.json by mk/openapi.mk: do not edit */'; \
	   echo '#include <stddef.h>'; \
	   echo 'extern const char mem_api__openapi_json[];'; \
	   echo 'extern const size_t mem_api__openapi_json_len;'; \
	   echo 'const char mem_api__openapi_json[] = {'; \
	   od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	   echo '0};'; \
	   echo 'const size_t mem_api__openapi_json_len = sizeof(mem_api__openapi_json) - 1;'; } > $@.tmp
	@mv $@.tmp $@
$(OPENAPI_O): $(OPENAPI_C)
	@echo "  CC  $<"
	@$(CC) $(CFLAGS) -c $< -o $@
$(B)/libmnemod.a: $(OPENAPI_O)

.PHONY: openapi-lint
openapi-lint:
	@sh scripts/openapi-lint.sh
