#include "profiler/import/byte_source_p.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

#ifdef BS_HAVE_ZLIB
#include <zlib.h>
#endif

namespace bs::profiler::kineto::detail {

namespace {
constexpr std::size_t kBufferBytes = 1u << 20;
}

struct ByteSource::Gzip
{
#ifdef BS_HAVE_ZLIB
    z_stream stream{};
    bool ended = false; ///< inflate reached Z_STREAM_END of the last member
#endif
};

ByteSource::~ByteSource()
{
#ifdef BS_HAVE_ZLIB
    if (m_gzip) {
        inflateEnd(&m_gzip->stream);
    }
#endif
    if (m_file) {
        std::fclose(m_file);
    }
}

std::unique_ptr<ByteSource> ByteSource::open(const std::string& path, std::string& error)
{
    struct stat info{};
    if (::stat(path.c_str(), &info) != 0) {
        error = std::string("cannot open: ") + std::strerror(errno);
        return nullptr;
    }
    if (!S_ISREG(info.st_mode)) {
        error = "not a regular file (a trace must be a plain or gzip JSON file)";
        return nullptr;
    }
    std::unique_ptr<ByteSource> source(new ByteSource());
    source->m_file = std::fopen(path.c_str(), "rb");
    if (!source->m_file) {
        error = std::string("cannot open: ") + std::strerror(errno);
        return nullptr;
    }
    source->m_out.resize(kBufferBytes);
    unsigned char magic[2] = {0, 0};
    const std::size_t got = std::fread(magic, 1, 2, source->m_file);
    std::rewind(source->m_file);
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
#ifdef BS_HAVE_ZLIB
        source->m_gzip = std::make_unique<Gzip>();
        // 16 + MAX_WBITS: gzip wrapper only. Concatenated members are handled in refill().
        if (inflateInit2(&source->m_gzip->stream, 16 + MAX_WBITS) != Z_OK) {
            error = "cannot start gzip decompression";
            source->m_gzip.reset();
            return nullptr;
        }
        source->m_in.resize(kBufferBytes);
#else
        error = "gzip trace, but this build has no zlib: gunzip it first";
        return nullptr;
#endif
    }
    source->setg(source->m_out.data(), source->m_out.data(), source->m_out.data());
    return source;
}

bool ByteSource::refill()
{
    if (m_eof) {
        return false;
    }
    std::size_t produced = 0;
    if (!m_gzip) {
        produced = std::fread(m_out.data(), 1, m_out.size(), m_file);
        if (produced == 0) {
            if (std::ferror(m_file)) {
                m_failure = std::string("read error: ") + std::strerror(errno);
            }
            m_eof = true;
            return false;
        }
    } else {
#ifdef BS_HAVE_ZLIB
        z_stream& z = m_gzip->stream;
        z.next_out = reinterpret_cast<Bytef*>(m_out.data());
        z.avail_out = static_cast<uInt>(m_out.size());
        while (z.avail_out == m_out.size()) {
            if (z.avail_in == 0) {
                const std::size_t n = std::fread(m_in.data(), 1, m_in.size(), m_file);
                if (n == 0) {
                    if (!m_gzip->ended) {
                        m_failure = "gzip stream truncated after " + std::to_string(m_compressedRead)
                                    + " compressed bytes";
                    }
                    break;
                }
                m_compressedRead += n;
                z.next_in = reinterpret_cast<Bytef*>(m_in.data());
                z.avail_in = static_cast<uInt>(n);
            }
            if (m_gzip->ended) {
                // Another gzip member follows the previous one: start it.
                inflateReset(&z);
                m_gzip->ended = false;
            }
            const int rc = inflate(&z, Z_NO_FLUSH);
            if (rc == Z_STREAM_END) {
                m_gzip->ended = true;
            } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
                m_failure = std::string("corrupt gzip data near compressed byte ")
                            + std::to_string(m_compressedRead - z.avail_in) + ": " + (z.msg ? z.msg : "inflate failed");
                break;
            }
        }
        produced = m_out.size() - z.avail_out;
        if (produced == 0) {
            m_eof = true;
            return false;
        }
#endif
    }
    m_consumed += produced;
    setg(m_out.data(), m_out.data(), m_out.data() + produced);
    return true;
}

ByteSource::int_type ByteSource::underflow()
{
    if (gptr() < egptr() || refill()) {
        return traits_type::to_int_type(*gptr());
    }
    return traits_type::eof();
}

} // namespace bs::profiler::kineto::detail
