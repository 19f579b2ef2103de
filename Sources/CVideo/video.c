#define _GNU_SOURCE
#include "video_private.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void dr_video_free(void *memory) { free(memory); }

void dr_say(char *error, size_t size, const char *format, ...) {
  if (!error || size == 0) return;
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(error, size, format, arguments);
  va_end(arguments);
}

// ---------------------------------------------------------------------------------------
// High dynamic range to sRGB: plain arithmetic, no FFmpeg.

// Linear light (0-1, 16384 steps) to 8-bit codes: sRGB's curve, and BT.1886's inverse.
static float srgb_encode_table[16385], bt1886_encode_table[16385];
static pthread_once_t encode_once = PTHREAD_ONCE_INIT;
static void fill_encode_tables(void) {
  for (int i = 0; i <= 16384; i++) {
    double v = i / 16384.0;
    double e = v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055;
    srgb_encode_table[i] = (float)(e * 255.0);
    bt1886_encode_table[i] = (float)(pow(v, 1 / 2.4) * 255.0);
  }
}

static double pq_eotf(double e) {  // SMPTE ST 2084: signal (0-1) to cd/m2
  const double m1 = 0.1593017578125, m2 = 78.84375;
  const double c1 = 0.8359375, c2 = 18.8515625, c3 = 18.6875;
  double p = pow(e, 1 / m2);
  double n = fmax(p - c1, 0) / (c2 - c3 * p);
  return 10000.0 * pow(n, 1 / m1);
}

static double hlg_inverse_oetf(double e) {  // BT.2100 HLG: signal (0-1) to scene light (0-1)
  const double a = 0.17883277, b = 0.28466892, c = 0.55991073;
  return e <= 0.5 ? e * e / 3.0 : (exp((e - c) / a) + b) / 12.0;
}

static const double diffuse_white_nits = 203.0;  // ITU-R BT.2408's HDR reference white
static const double knee = 0.75;                 // below this (of white) light is kept as it is

void dr_hdr_to_srgb8(const uint16_t *in, size_t pixel_count, int transfer, int primaries,
                     double peak_nits, int video, unsigned char *out) {
  pthread_once(&encode_once, fill_encode_tables);
  const float *encode = video ? bt1886_encode_table : srgb_encode_table;
  float *linear = malloc(65536 * sizeof *linear);
  if (!linear) {
    memset(out, 0, pixel_count * 3);
    return;
  }
  int pq = transfer == 16, hlg = transfer == 18;
  for (int v = 0; v < 65536; v++) {
    double e = v / 65535.0;
    double l = pq               ? pq_eotf(e) / diffuse_white_nits
               : hlg            ? hlg_inverse_oetf(e)
               : transfer == 13 ? (e <= 0.04045 ? e / 12.92 : pow((e + 0.055) / 1.055, 2.4))
                                : pow(e, 2.4);  // BT.1886, white at 1
    linear[v] = (float)l;
  }
  // To BT.709's primaries in linear light: from BT.2020 (ITU-R BT.2087) or Display P3.
  static const float from2020[9] = {1.6605f, -0.5876f, -0.0728f, -0.1246f, 1.1329f,
                                    -0.0083f, -0.0182f, -0.1006f, 1.1187f};
  static const float fromP3[9] = {1.2249f, -0.2247f, 0.0f, -0.0420f, 1.0419f,
                                  0.0f, -0.0197f, -0.0786f, 1.0979f};
  const float *to709 = primaries == 9 ? from2020 : primaries == 12 ? fromP3 : NULL;
  const float *y = primaries == 9    ? (const float[]){0.2627f, 0.6780f, 0.0593f}
                   : primaries == 12 ? (const float[]){0.2290f, 0.6917f, 0.0793f}
                                     : (const float[]){0.2126f, 0.7152f, 0.0722f};
  // HLG's OOTF for a 1000 cd/m2 display (system gamma 1.2), relative to diffuse white.
  const double hlg_scale = 1000.0 / diffuse_white_nits;
  double peak = pq || hlg ? fmax(peak_nits, 1.0) / diffuse_white_nits : 1.0;
  double span = (peak - knee) / (1 - knee);
  for (size_t i = 0; i < pixel_count; i++) {
    float r = linear[in[3 * i]], g = linear[in[3 * i + 1]], b = linear[in[3 * i + 2]];
    if (hlg) {
      float ys = y[0] * r + y[1] * g + y[2] * b;
      float gain = (float)(hlg_scale * (ys > 0 ? pow(ys, 0.2) : 0));
      r *= gain, g *= gain, b *= gain;
    }
    if (to709) {
      float r2 = to709[0] * r + to709[1] * g + to709[2] * b;
      float g2 = to709[3] * r + to709[4] * g + to709[5] * b;
      float b2 = to709[6] * r + to709[7] * g + to709[8] * b;
      r = r2, g = g2, b = b2;
    }
    r = fmaxf(r, 0), g = fmaxf(g, 0), b = fmaxf(b, 0);
    float m = fmaxf(r, fmaxf(g, b));
    if (m > knee && peak > 1.0) {
      // Extended Reinhard on the largest band above the knee (hue kept): white at `peak`.
      double x = (m - knee) / (1 - knee);
      double rolled = m >= peak ? 1.0 : knee + (1 - knee) * x * (1 + x / (span * span)) / (1 + x);
      float s = (float)(rolled / m);
      r *= s, g *= s, b *= s;
    }
    float bands[3] = {r, g, b};
    for (int k = 0; k < 3; k++) {
      float v = fminf(bands[k], 1.0f) * 16384.0f;
      out[3 * i + k] = (unsigned char)(encode[(int)(v + 0.5f)] + 0.5f);
    }
  }
  free(linear);
}

#if DR_HAVE_FFMPEG

#define DR_POINTER(name) __typeof__(&name) p_##name;
DR_AVUTIL(DR_POINTER)
DR_AVCODEC(DR_POINTER)
DR_AVFORMAT(DR_POINTER)
DR_SWSCALE(DR_POINTER)
DR_SWRESAMPLE(DR_POINTER)
#undef DR_POINTER

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];
static int loaded;

static void *open_library(const char *soname) {
  void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!library && !load_error[0])
    snprintf(load_error, sizeof load_error,
             "cannot load FFmpeg's %s (install libavformat59, libavcodec59, libswscale6 and "
             "libswresample4, or "
             "ffmpeg): %s",
             soname, dlerror());
  return library;
}

static void load(void) {
  void *avutil = open_library(DR_SONAME("avutil", LIBAVUTIL_VERSION_MAJOR));
  void *avcodec = avutil ? open_library(DR_SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR)) : NULL;
  void *avformat = avcodec ? open_library(DR_SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR)) : NULL;
  void *swscale = avformat ? open_library(DR_SONAME("swscale", LIBSWSCALE_VERSION_MAJOR)) : NULL;
  void *swresample =
      swscale ? open_library(DR_SONAME("swresample", LIBSWRESAMPLE_VERSION_MAJOR)) : NULL;
  if (!swresample) return;
#define DR_RESOLVE(library, name)                                                         \
  p_##name = (__typeof__(p_##name))dlsym(library, #name);                               \
  if (!p_##name) {                                                                       \
    snprintf(load_error, sizeof load_error, "FFmpeg's libraries lack %s", #name);        \
    return;                                                                              \
  }
#define DR_UTIL(name) DR_RESOLVE(avutil, name)
#define DR_CODEC(name) DR_RESOLVE(avcodec, name)
#define DR_FORMAT(name) DR_RESOLVE(avformat, name)
#define DR_SCALE(name) DR_RESOLVE(swscale, name)
  DR_AVUTIL(DR_UTIL)
  DR_AVCODEC(DR_CODEC)
  DR_AVFORMAT(DR_FORMAT)
  DR_SWSCALE(DR_SCALE)
#define DR_RESAMPLE(name) DR_RESOLVE(swresample, name)
  DR_SWRESAMPLE(DR_RESAMPLE)
  // Darkroom reports failures itself, one line per file.
  p_av_log_set_level(getenv("DARKROOM_FFMPEG_DEBUG") ? AV_LOG_DEBUG : getenv("DARKROOM_FFMPEG_WARNINGS") ? AV_LOG_WARNING : AV_LOG_QUIET);
  loaded = 1;
}

int dr_video_load(char *error, size_t error_size) {
  pthread_once(&load_once, load);
  if (loaded) return 0;
  dr_say(error, error_size, "%s", load_error[0] ? load_error : "cannot load FFmpeg's libraries");
  return -1;
}

// ---------------------------------------------------------------------------------------
// Reading: FFmpeg reads through Darkroom's descriptor or memory, never opening a path.


int dr_read_bytes(void *opaque, uint8_t *buffer, int size) {
  Reader *reader = opaque;
  if (reader->position >= reader->size) return AVERROR_EOF;
  int64_t left = reader->size - reader->position;
  int count = left < size ? (int)left : size;
  if (reader->source.fd >= 0) {
    ssize_t n;
    do n = pread(reader->source.fd, buffer, (size_t)count, reader->position);
    while (n < 0 && errno == EINTR);
    if (n < 0) return AVERROR(errno);
    if (n == 0) return AVERROR_EOF;
    count = (int)n;
  } else {
    memcpy(buffer, reader->source.bytes + reader->position, (size_t)count);
  }
  reader->position += count;
  return count;
}

int64_t dr_seek_bytes(void *opaque, int64_t offset, int whence) {
  Reader *reader = opaque;
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return reader->size;
  int64_t base = whence == SEEK_CUR ? reader->position : whence == SEEK_END ? reader->size : 0;
  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return AVERROR(EINVAL);
  int64_t target = base + offset;
  if (target < 0) return AVERROR(EINVAL);
  reader->position = target;
  return target;
}


void dr_close_video(Video *v) {
  if (v->frame) p_av_frame_free(&v->frame);
  if (v->best) p_av_frame_free(&v->best);
  if (v->packet) p_av_packet_free(&v->packet);
  if (v->codec) p_avcodec_free_context(&v->codec);
  if (v->format) p_avformat_close_input(&v->format);  // frees the context, not our AVIO
  if (v->io) {
    p_av_free(v->io->buffer);
    p_avio_context_free(&v->io);
  }
}

void dr_av_message(int code, char *text, size_t size) {
  if (p_av_strerror(code, text, size) < 0) snprintf(text, size, "error %d", code);
}

// (Re)opens v->decoder for the video stream, threaded as `thread_type` says; a decoder open
// before is freed first. 0, or -1 with a reason in `error`.
static int open_decoder(Video *v, int thread_type, char *error, size_t error_size) {
  if (v->codec) p_avcodec_free_context(&v->codec);
  v->codec = p_avcodec_alloc_context3(v->decoder);
  if (!v->codec ||
      p_avcodec_parameters_to_context(v->codec, v->format->streams[v->stream]->codecpar) < 0) {
    dr_say(error, error_size, "out of memory");
    return -1;
  }
  v->codec->thread_count = 0;
  v->codec->thread_type = thread_type;
  v->thread_type = thread_type;
  int rc = p_avcodec_open2(v->codec, v->decoder, NULL);
  if (rc < 0) {
    char text[256];
    dr_av_message(rc, text, sizeof text);
    dr_say(error, error_size, "its video decoder cannot start (%s)", text);
    return -1;
  }
  return 0;
}

int dr_open_video(Video *v, const DrVideoSource *source, long long max_pixels, int thread_type,
                  char *error, size_t error_size) {
  v->reader.source = *source;
  if (source->fd >= 0) {
    struct stat info;
    if (fstat(source->fd, &info) != 0) {
      dr_say(error, error_size, "cannot read: %s", strerror(errno));
      return -1;
    }
    v->reader.size = info.st_size;
  } else {
    v->reader.size = (int64_t)source->length;
  }
  const int buffer_size = 1 << 16;
  unsigned char *buffer = p_av_malloc(buffer_size);
  if (buffer) v->io = p_avio_alloc_context(buffer, buffer_size, 0, &v->reader, dr_read_bytes, NULL,
                                           dr_seek_bytes);
  if (!v->io) {
    if (buffer) p_av_free(buffer);
    dr_say(error, error_size, "out of memory");
    return -1;
  }
  v->format = p_avformat_alloc_context();
  if (!v->format) {
    dr_say(error, error_size, "out of memory");
    return -1;
  }
  v->format->pb = v->io;
  v->format->flags |= AVFMT_FLAG_CUSTOM_IO;
  char text[256];
  int rc = p_avformat_open_input(&v->format, NULL, NULL, NULL);
  if (rc < 0) {  // avformat_open_input freed the context
    dr_av_message(rc, text, sizeof text);
    dr_say(error, error_size, "is not a video FFmpeg reads (%s)", text);
    return -1;
  }
  // ISO media keep every stream's codec, size and timing in their header: probing by
  // decoding frames (avformat_find_stream_info, 50 ms of a 1080p poster's 250) is only for a
  // header that does not say (measured: the same posters either way).
  const AVCodec *decoder = NULL;
  v->stream = p_av_find_best_stream(v->format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
  if (v->stream < 0 || v->format->streams[v->stream]->codecpar->width <= 0) {
    rc = p_avformat_find_stream_info(v->format, NULL);
    if (rc < 0) {
      dr_av_message(rc, text, sizeof text);
      dr_say(error, error_size, "damaged video: its streams cannot be read (%s)", text);
      return -1;
    }
    v->stream = p_av_find_best_stream(v->format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
  }
  if (v->stream == AVERROR_DECODER_NOT_FOUND) {
    dr_say(error, error_size, "its video is in a format this FFmpeg cannot decode");
    return -1;
  }
  if (v->stream < 0 || !decoder) {
    dr_say(error, error_size, "has no video stream");
    return -1;
  }
  AVCodecParameters *parameters = v->format->streams[v->stream]->codecpar;
  long long pixels = (long long)parameters->width * parameters->height;
  if (parameters->width <= 0 || parameters->height <= 0) {
    dr_say(error, error_size, "damaged video: its frames have no size");
    return -1;
  }
  if (pixels > max_pixels) {
    dr_say(error, error_size, "video frames are %dx%d, over the limit of %lld pixels",
        parameters->width, parameters->height, max_pixels);
    return -1;
  }
  v->decoder = decoder;
  if (open_decoder(v, thread_type, error, error_size) != 0) return -1;
  v->packet = p_av_packet_alloc();
  v->frame = p_av_frame_alloc();
  v->best = p_av_frame_alloc();
  if (!v->packet || !v->frame || !v->best) {
    dr_say(error, error_size, "out of memory");
    return -1;
  }
  return 0;
}

enum { MAX_BAD_PACKETS = 64, MAX_PACKETS = 20000 };

// Reads the next packet and sends it to the decoder if it is the video stream's; at the
// container's end, drains the decoder. 1 when a packet of the stream was sent, 0 when none
// was, AVERROR_EOF past MAX_PACKETS, or the AVERROR of a bad packet past MAX_BAD_PACKETS.
static int feed(Video *v) {
  if (++v->packets > MAX_PACKETS) return AVERROR_EOF;
  if (p_av_read_frame(v->format, v->packet) < 0) {
    p_avcodec_send_packet(v->codec, NULL);
    v->drained = 1;
    return 0;
  }
  int sent = 0;
  if (v->packet->stream_index == v->stream) {
    int rc = p_avcodec_send_packet(v->codec, v->packet);
    if (rc < 0 && rc != AVERROR(EAGAIN) && ++v->bad_packets > MAX_BAD_PACKETS) {
      p_av_packet_unref(v->packet);
      return rc;
    }
    sent = rc >= 0;
  }
  p_av_packet_unref(v->packet);
  return sent;
}

// The next decoded frame of the stream into v->frame: 0, or an AVERROR (AVERROR_EOF at
// the end).
static int next_frame(Video *v) {
  for (;;) {
    p_av_frame_unref(v->frame);
    int rc = p_avcodec_receive_frame(v->codec, v->frame);
    if (rc == 0) {
      v->decoded++;
      return 0;
    }
    if (rc != AVERROR(EAGAIN)) return rc;
    if (v->drained) return AVERROR_EOF;
    rc = feed(v);
    if (rc < 0) return rc;
  }
}

double dr_frame_time(Video *v, const AVFrame *frame) {
  AVStream *stream = v->format->streams[v->stream];
  int64_t pts = frame->best_effort_timestamp;
  if (pts == AV_NOPTS_VALUE) return 0;
  int64_t start = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
  return (double)(pts - start) * av_q2d(stream->time_base);
}

// The spread of a frame's brightness (0-255): the standard deviation of its luma at 64x64
// points, read straight from the luma plane of a YUV frame (a grey copy through swscale, for
// other formats, cost 8 ms a 1080p frame).
static double spread(const AVFrame *frame) {
  const AVPixFmtDescriptor *d = p_av_pix_fmt_desc_get(frame->format);
  if (d && !(d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL |
                         AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_BE)) &&
      (d->flags & AV_PIX_FMT_FLAG_PLANAR) && d->comp[0].plane == 0 && d->comp[0].depth <= 16 &&
      frame->data[0] && frame->width > 0 && frame->height > 0) {
    const int depth = d->comp[0].depth, wide = depth > 8, shift = d->comp[0].shift;
    const double scale = 255.0 / ((1 << depth) - 1);
    double sum = 0, squares = 0;
    for (int j = 0; j < 64; j++) {
      const uint8_t *row =
          frame->data[0] + (size_t)((j * 2 + 1) * frame->height / 128) * frame->linesize[0];
      for (int i = 0; i < 64; i++) {
        int x = (i * 2 + 1) * frame->width / 128;
        const uint8_t *at = row + (size_t)x * d->comp[0].step;
        uint16_t sample = at[0];
        if (wide) memcpy(&sample, at, sizeof sample);
        double value = (sample >> shift) * scale;
        sum += value, squares += value * value;
      }
    }
    double mean = sum / (64 * 64);
    return sqrt(fmax(squares / (64 * 64) - mean * mean, 0));
  }
  struct SwsContext *scaler = p_sws_getContext(frame->width, frame->height, frame->format, 64, 64,
                                               AV_PIX_FMT_GRAY8, SWS_AREA, NULL, NULL, NULL);
  if (!scaler) return 0;
  unsigned char grey[64 * 64];
  unsigned char *planes[4] = {grey, NULL, NULL, NULL};
  int strides[4] = {64, 0, 0, 0};
  int rows = p_sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0,
                         frame->height, planes, strides);
  p_sws_freeContext(scaler);
  if (rows <= 0) return 0;
  double sum = 0, squares = 0;
  for (int i = 0; i < 64 * 64; i++) sum += grey[i], squares += (double)grey[i] * grey[i];
  double mean = sum / (64 * 64);
  return sqrt(fmax(squares / (64 * 64) - mean * mean, 0));
}

int dr_scaler_colourspace(const AVFrame *frame) {
  return dr_matrix_colourspace(frame->colorspace, frame->height);
}

int dr_matrix_colourspace(int colorspace, int height) {
  switch (colorspace) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M;
    case AVCOL_SPC_FCC: return SWS_CS_FCC;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M: return SWS_CS_ITU601;
    default: return height >= 720 ? SWS_CS_ITU709 : SWS_CS_ITU601;  // as players guess
  }
}

int dr_full_range(const AVFrame *frame) {
  if (frame->color_range == AVCOL_RANGE_JPEG) return 1;
  switch (frame->format) {
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUVJ444P:
    case AV_PIX_FMT_YUVJ440P:
    case AV_PIX_FMT_YUVJ411P: return 1;
    default: return 0;
  }
}

// Scales the chosen frame into the box and converts it to 8-bit sRGB.
// `still`: encoded with sRGB's curve, as a photo is shown; else with BT.1886's inverse.
static int convert(const AVFrame *frame, const DrVideoOptions *options, int still,
                   DrVideoFrame *out, char *error, size_t error_size) {
  int width = frame->width, height = frame->height;
  double scale = 1;
  if (options->box_width > 0 && options->box_height > 0)
    scale = fmin(fmin((double)options->box_width / width, (double)options->box_height / height), 1);
  int out_width = (int)fmax(1, lround(width * scale));
  int out_height = (int)fmax(1, lround(height * scale));
  int transfer = frame->color_trc == AVCOL_TRC_SMPTE2084     ? DR_TRANSFER_PQ
                 : frame->color_trc == AVCOL_TRC_ARIB_STD_B67 ? DR_TRANSFER_HLG
                                                              : DR_TRANSFER_SDR;
  int primaries = frame->color_primaries;  // FFmpeg's values are H.273's, as is color_trc
  int wide = transfer != DR_TRANSFER_SDR || primaries == AVCOL_PRI_BT2020 ||
             primaries == AVCOL_PRI_SMPTE432;  // through 16 bits and linear light
  const AVPixFmtDescriptor *descriptor = p_av_pix_fmt_desc_get(frame->format);
  out->transfer = transfer;
  out->primaries = frame->color_primaries;
  out->bit_depth = descriptor ? descriptor->comp[0].depth : 8;
  enum AVPixelFormat target = wide ? AV_PIX_FMT_RGB48 : AV_PIX_FMT_RGB24;
  struct SwsContext *scaler = p_sws_getContext(
      width, height, frame->format, out_width, out_height, target,
      SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP, NULL, NULL, NULL);
  if (!scaler) {
    dr_say(error, error_size, "its frames' pixel format cannot be converted");
    return -1;
  }
  const int *coefficients = p_sws_getCoefficients(dr_scaler_colourspace(frame));
  p_sws_setColorspaceDetails(scaler, coefficients, dr_full_range(frame),
                             p_sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
  size_t count = (size_t)out_width * out_height;
  unsigned char *rgb = malloc(count * 3);
  uint16_t *deep = wide ? malloc(count * 3 * sizeof *deep) : NULL;
  if (!rgb || (wide && !deep)) {
    free(rgb), free(deep);
    p_sws_freeContext(scaler);
    dr_say(error, error_size, "out of memory");
    return -1;
  }
  unsigned char *planes[4] = {wide ? (unsigned char *)deep : rgb, NULL, NULL, NULL};
  int strides[4] = {out_width * 3 * (wide ? 2 : 1), 0, 0, 0};
  int rows = p_sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0, height,
                         planes, strides);
  p_sws_freeContext(scaler);
  if (rows <= 0) {
    free(rgb), free(deep);
    dr_say(error, error_size, "its frame cannot be converted to RGB");
    return -1;
  }
  if (wide) {
    dr_hdr_to_srgb8(deep, count, frame->color_trc, primaries, 1000.0, !still, rgb);
    free(deep);
  }
  out->pixels = rgb;
  out->width = out_width, out->height = out_height;
  out->source_width = width, out->source_height = height;
  return 0;
}

static const double content_spread = 10.0;  // of 255: a fade, a black or white card is below

// The next frame of the stream, decoded alone, into v->frame: packets are read up to the
// first of the video stream, which is sent, and the decoder is drained, so that the frame
// comes back at once. (A decoder holds a frame back until the frames that come before it on
// screen are decoded: two or three of a phone's video, 50 ms of a 1080p keyframe's 80 here.)
// The decoder is spent after it: what follows seeks, or starts a new one (restart). 0, or an
// AVERROR.
static int one_frame(Video *v) {
  while (!v->drained) {
    int rc = feed(v);
    if (rc < 0) return rc;
    if (rc == 1) {
      p_avcodec_send_packet(v->codec, NULL);
      v->drained = 1;
    }
  }
  p_av_frame_unref(v->frame);
  int rc = p_avcodec_receive_frame(v->codec, v->frame);
  if (rc == 0) v->decoded++;
  return rc == AVERROR(EAGAIN) ? AVERROR_EOF : rc;
}

// A new decoder, its frames in parallel (looks that decode on through frames), from the
// keyframe at or before `timestamp` (the start, if none). 0, or -1 with a reason in `error`.
static int restart(Video *v, int64_t timestamp, char *error, size_t error_size) {
  if (open_decoder(v, FF_THREAD_FRAME | FF_THREAD_SLICE, error, error_size) != 0) return -1;
  v->codec->skip_frame = AVDISCARD_NONREF;
  AVStream *stream = v->format->streams[v->stream];
  int64_t start = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
  if (p_av_seek_frame(v->format, v->stream, timestamp, AVSEEK_FLAG_BACKWARD) < 0) {
    p_av_seek_frame(v->format, v->stream, start, AVSEEK_FLAG_BACKWARD);
  }
  v->drained = 0;
  return 0;
}

// The timestamp to ask av_seek_frame for to land on index entry `index` (a keyframe):
// halfway to the next keyframe's. A demuxer may take the timestamp asked as a presentation
// time and look it up among decoding times less the frames' reorder delay (MP4 and MOV do),
// so the entry's own timestamp (a decoding time) lands on the keyframe before it: a fade's
// poster decoded its whole first second, frame by frame, to reach the keyframe at 1 s.
static int64_t seek_timestamp(AVStream *stream, int index) {
  const AVIndexEntry *entry = p_avformat_index_get_entry(stream, index);
  int count = p_avformat_index_get_entries_count(stream);
  for (int i = index + 1; entry && i < count; i++) {
    const AVIndexEntry *e = p_avformat_index_get_entry(stream, i);
    if (e && (e->flags & AVINDEX_KEYFRAME)) {
      return entry->timestamp + (e->timestamp - entry->timestamp) / 2;
    }
  }
  return entry ? entry->timestamp + (int64_t)(0.5 / av_q2d(stream->time_base)) : 0;
}

int dr_video_frame(const DrVideoSource *source, const DrVideoOptions *options, DrVideoFrame *out,
                   char *error, size_t error_size) {
  memset(out, 0, sizeof *out);
  if (dr_video_load(error, error_size) != 0) return -1;
  Video v;
  memset(&v, 0, sizeof v);
  // A look at the first frame, or at a keyframe sought to (a fade's end), decodes that frame
  // alone (one_frame), with its slices in parallel (a 4K HEVC frame's rows; Benchmarks/README,
  // video.sh, has what each change saved). Frames go in parallel only when decoding goes on
  // through a stretch without a keyframe (restart), where they decode a second of frames 20%
  // sooner than slices alone (H.264 from x264 has one slice a frame).
  if (dr_open_video(&v, source, options->max_pixels, FF_THREAD_SLICE, error, error_size) != 0) {
    dr_close_video(&v);
    return -1;
  }
  AVStream *stream = v.format->streams[v.stream];
  double duration = stream->duration != AV_NOPTS_VALUE
                        ? (double)stream->duration * av_q2d(stream->time_base)
                        : (v.format->duration > 0 ? (double)v.format->duration / AV_TIME_BASE : 0);
  double best_spread = -1, best_time = 0;
  int looked = 0, rc = 0;
  // A look at one frame (the first, or a keyframe sought to) decodes that frame alone.
  int single = 1;
  int64_t start_time = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
  double time_base = av_q2d(stream->time_base);
  double current = -1;  // the time of the last frame decoded
  // Times to look at: the start, then every half second to 2 s, then every second.
  for (int k = 0;; k++) {
    double target = k <= 4 ? k * 0.5 : (double)(k - 2);
    if (k > 0 && (target > options->search_seconds || (duration > 0 && target >= duration)))
      break;
    if (k > 0 && target <= current) continue;  // passed already, on the way to a keyframe
    if (k == 1) {
      // Past the first frame the poster need not be an exact time: frames nothing refers to
      // (most B-frames) are skipped, not decoded, on the way to each later time.
      v.codec->skip_frame = AVDISCARD_NONREF;
    }
    if (k > 0) {
      int64_t start = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
      double base = av_q2d(stream->time_base);
      // A keyframe after here and before half a second past the target is the cheapest frame
      // to look at (one decode; a fade's end is often one): it is sought and taken.
      const AVIndexEntry *entry = NULL;
      int entry_index = -1;
      int count = p_avformat_index_get_entries_count(stream);
      for (int i = 0; i < count; i++) {
        const AVIndexEntry *e = p_avformat_index_get_entry(stream, i);
        if (!e || !(e->flags & AVINDEX_KEYFRAME)) continue;
        double at = (double)(e->timestamp - start) * base;
        if (at > target + 0.5) break;
        if (at > current + 0.001) {
          entry = e, entry_index = i;
          target = at;
          break;
        }
      }
      // Else the keyframe at or before the target, if it is after here; else decode on.
      if (!entry) {
        int64_t timestamp = start + (int64_t)(target / base);
        entry_index = p_av_index_search_timestamp(stream, timestamp, AVSEEK_FLAG_BACKWARD);
        entry = entry_index >= 0 ? p_avformat_index_get_entry(stream, entry_index) : NULL;
        if (entry && (double)(entry->timestamp - start) * base <= current) entry = NULL;
      }
      single = 0;
      if (entry && p_av_seek_frame(v.format, v.stream, seek_timestamp(stream, entry_index),
                                   AVSEEK_FLAG_BACKWARD) >= 0) {
        p_avcodec_flush_buffers(v.codec);
        v.drained = 0;
        single = !(v.thread_type & FF_THREAD_FRAME);
      } else if (!(v.thread_type & FF_THREAD_FRAME)) {
        // Decoding goes on to the target (the first look's decoder is spent): with frames in
        // parallel, from the keyframe before it.
        if (restart(&v, start + (int64_t)(target / base), error, error_size) != 0) {
          dr_close_video(&v);
          return -1;
        }
      }
    }
    if (single) {
      rc = one_frame(&v);
      if (rc == 0) {
        current = dr_frame_time(&v, v.frame);
      } else {
        // No frame from one packet (damage, or a stream that does not start on a keyframe):
        // decode on from the keyframe before the target, as any look does.
        single = 0;
        if (restart(&v, start_time + (int64_t)(target / time_base), error, error_size) != 0) {
          dr_close_video(&v);
          return -1;
        }
      }
    }
    if (!single) {
      while ((rc = next_frame(&v)) == 0) {
        current = dr_frame_time(&v, v.frame);
        if (current >= target - 0.001 || k == 0) break;
      }
    }
    if (rc != 0) break;
    looked++;
    double s = spread(v.frame);
    if (s > best_spread) {
      best_spread = s, best_time = current;
      p_av_frame_unref(v.best);
      p_av_frame_move_ref(v.best, v.frame);
    }
    if (s >= content_spread) break;
  }
  if (looked == 0) {
    char text[256] = "no frame";
    if (rc != 0 && rc != AVERROR_EOF) dr_av_message(rc, text, sizeof text);
    dr_say(error, error_size, "damaged video: no frame can be decoded (%s)", text);
    dr_close_video(&v);
    return -1;
  }
  int converted = convert(v.best, options, 0, out, error, error_size);
  out->time = best_time, out->spread = best_spread, out->frames_looked_at = looked;
  out->frames_decoded = v.decoded;
  dr_close_video(&v);
  return converted;
}

int dr_av1_still(const unsigned char *bytes, size_t length, const DrVideoOptions *options,
                 const DrCodedColour *colour, DrVideoFrame *out, char *error, size_t error_size) {
  memset(out, 0, sizeof *out);
  if (dr_video_load(error, error_size) != 0) return -1;
  if (length == 0 || length > INT_MAX) {
    dr_say(error, error_size, "damaged image: its AV1 data is %s", length ? "too long" : "empty");
    return -1;
  }
  // dav1d (FFmpeg's libdav1d decoder) first, as FFmpeg's own AV1 decoder needs a GPU.
  const AVCodec *decoder = p_avcodec_find_decoder_by_name("libdav1d");
  if (!decoder) decoder = p_avcodec_find_decoder(AV_CODEC_ID_AV1);
  AVCodecContext *codec = decoder ? p_avcodec_alloc_context3(decoder) : NULL;
  AVPacket *packet = p_av_packet_alloc();
  AVFrame *frame = p_av_frame_alloc();
  int rc = -1;
  if (!codec || !packet || !frame) {
    dr_say(error, error_size, decoder ? "out of memory" : "this FFmpeg has no AV1 decoder");
    goto done;
  }
  // One picture at a time: no frames held back for frame threading.
  codec->flags |= AV_CODEC_FLAG_LOW_DELAY;
  codec->thread_count = 0;
  int status = p_avcodec_open2(codec, decoder, NULL);
  if (status < 0) {
    char text[256];
    dr_av_message(status, text, sizeof text);
    dr_say(error, error_size, "cannot open FFmpeg's AV1 decoder: %s", text);
    goto done;
  }
  packet->data = (uint8_t *)bytes;  // not reference-counted: FFmpeg copies it
  packet->size = (int)length;
  status = p_avcodec_send_packet(codec, packet);
  if (status >= 0) status = p_avcodec_send_packet(codec, NULL);
  if (status >= 0) status = p_avcodec_receive_frame(codec, frame);
  if (status < 0) {
    char text[256];
    dr_av_message(status, text, sizeof text);
    dr_say(error, error_size, "damaged image: its AV1 data cannot be decoded (%s)", text);
    goto done;
  }
  if (frame->width <= 0 || frame->height <= 0 ||
      (long long)frame->width * frame->height > options->max_pixels) {
    dr_say(error, error_size, "image is %dx%d, over the limit of %lld pixels", frame->width,
        frame->height, options->max_pixels);
    goto done;
  }
  // The container's colour box wins over the bitstream's, as libheif has it.
  if (colour) {
    if (colour->primaries >= 0) frame->color_primaries = colour->primaries;
    if (colour->transfer >= 0) frame->color_trc = colour->transfer;
    if (colour->matrix >= 0) frame->colorspace = colour->matrix;
    if (colour->full_range >= 0)
      frame->color_range = colour->full_range ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
  }
  rc = convert(frame, options, 1, out, error, error_size);
  out->frames_looked_at = 1;
done:
  p_av_frame_free(&frame);
  p_av_packet_free(&packet);
  p_avcodec_free_context(&codec);
  return rc;
}

#else  // built without FFmpeg's headers

int dr_video_load(char *error, size_t error_size) {
  dr_say(error, error_size,
      "this Darkroom was built without FFmpeg's headers (libavformat-dev, libavcodec-dev, "
      "libswscale-dev), so it decodes no video frames");
  return -1;
}

int dr_video_frame(const DrVideoSource *source, const DrVideoOptions *options, DrVideoFrame *out,
                   char *error, size_t error_size) {
  (void)source, (void)options;
  memset(out, 0, sizeof *out);
  return dr_video_load(error, error_size);
}

int dr_av1_still(const unsigned char *bytes, size_t length, const DrVideoOptions *options,
                 const DrCodedColour *colour, DrVideoFrame *out, char *error, size_t error_size) {
  (void)bytes, (void)length, (void)options, (void)colour;
  memset(out, 0, sizeof *out);
  return dr_video_load(error, error_size);
}

#endif
