#pragma once
// A std::streambuf over a trace file that is plain JSON or gzip (torch.profiler's
// tensorboard_trace_handler writes "*.pt.trace.json.gz" with use_gzip=True). It reads 1 MiB at a
// time, so a trace of any size is parsed in constant memory; the SAX parser pulls bytes from it.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <streambuf>
#include <string>
#include <vector>

namespace bs::profiler::kineto::detail {

class ByteSource : public std::streambuf
{
public:
    ~ByteSource() override;
    ByteSource(const ByteSource&) = delete;
    ByteSource& operator=(const ByteSource&) = delete;

    /// Opens `path`; gzip is recognised by its magic bytes, not by the name. Returns nullptr and
    /// sets `error` when the file cannot be opened or is not a regular file.
    static std::unique_ptr<ByteSource> open(const std::string& path, std::string& error);

    /// Uncompressed bytes handed out so far (the parser's position, to within one buffer).
    std::uint64_t consumed() const { return m_consumed - static_cast<std::uint64_t>(egptr() - gptr()); }
    /// Set when decompression or reading failed (the parser then sees an early end of input).
    const std::string& failure() const { return m_failure; }
    bool compressed() const { return m_gzip != nullptr; }

protected:
    int_type underflow() override;

private:
    ByteSource() = default;
    bool refill();

    std::FILE* m_file = nullptr;
    struct Gzip;
    std::unique_ptr<Gzip> m_gzip;
    std::vector<char> m_in;  ///< compressed input (gzip only)
    std::vector<char> m_out; ///< bytes the parser reads
    std::uint64_t m_consumed = 0;
    std::uint64_t m_compressedRead = 0;
    bool m_eof = false;
    std::string m_failure;
};

} // namespace bs::profiler::kineto::detail
