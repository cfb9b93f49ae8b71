// libFuzzer harness: token files (llm.c / headerless .bin, UTF-8 text), read through a memfd so
// the real mapping path runs, then opened as a token source and sampled.
#include "runtime/train/data/token_files.h"
#include "runtime/train/data/token_source.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const int fd = ::memfd_create("fuzz-tokens", 0);
    if (fd < 0 || ::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
        return 0;
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    for (const char* kind : {"bin:", "text:"}) {
        auto source = bs::runtime::openTokenSource(std::string(kind) + path, 512, 4, 7, 0.25);
        if (source) {
            for (std::int64_t i = 0; i < 3; ++i) {
                (void)(*source)->batch(bs::runtime::Split::Train, i, 2);
                (void)(*source)->batch(bs::runtime::Split::Validation, i, 1);
            }
        }
    }
    return 0;
}
