# console.mk - the web console (api/console/: plain ES modules, one stylesheet) compiled
# into the binary. scripts/embed-assets.c turns the files into byte arrays at build time;
# nothing is read from disk or built at run time.
CONSOLE_FILES := $(sort $(wildcard api/console/*.html api/console/*.js api/console/*.css \
                                   api/console/*.svg))
EMBED_TOOL    := $(B)/tools/embed-assets
CONSOLE_LIST  := $(B)/gen/console.list
CONSOLE_GEN   := $(B)/gen/console_assets.c
CONSOLE_OBJ   := $(B)/gen/console_assets.o
FORMAT_SRCS   += scripts/embed-assets.c

# the file list as a prerequisite, so adding or removing a file regenerates the table
$(shell mkdir -p $(B)/gen && { echo '$(CONSOLE_FILES)' | cmp -s - $(CONSOLE_LIST) || \
    echo '$(CONSOLE_FILES)' > $(CONSOLE_LIST); })

$(EMBED_TOOL): scripts/embed-assets.c
	@mkdir -p $(@D)
	@echo "  CC  $<"
	@$(CC) -O2 -o $@ $<

$(CONSOLE_GEN): $(EMBED_TOOL) $(CONSOLE_FILES) $(CONSOLE_LIST)
	@echo "  GEN $@"
	@$(EMBED_TOOL) $@ $(CONSOLE_FILES)

$(CONSOLE_OBJ): $(CONSOLE_GEN)
	@echo "  CC  $<"
	@$(CC) $(CFLAGS) -c $< -o $@

$(B)/libmnemod.a: $(CONSOLE_OBJ)
