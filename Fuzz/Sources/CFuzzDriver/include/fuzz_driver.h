// libFuzzer's driver, called from each target's entry point: SwiftPM links executables with
// `main` aliased to `<Target>_main`, which -parse-as-library never emits, so each target
// defines that symbol itself and hands control to libFuzzer.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*callback)(const uint8_t *data, size_t size));
