// What video.c (loading FFmpeg, reading, posters) and transcode.c (playable renditions and
// edits of videos) share: FFmpeg's functions as dlopen resolved them, and one open video.
// Not a public header: Swift sees dr_video.h only.
#ifndef DARKROOM_VIDEO_PRIVATE_H
#define DARKROOM_VIDEO_PRIVATE_H

#include "dr_video.h"

/// Writes a message into `error` (of `size` bytes), printf-style.
void dr_say(char *error, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#if __has_include(<libavformat/avformat.h>) && __has_include(<libswscale/swscale.h>) && \
    __has_include(<libswresample/swresample.h>)
#define DR_HAVE_FFMPEG 1
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

#define DR_STRING(x) #x
#define DR_SONAME(lib, major) "lib" lib ".so." DR_STRING(major)

// The FFmpeg functions Darkroom calls, resolved by dr_video_load from the libraries whose
// headers it was built with (the same major versions: their ABI).
#define DR_AVUTIL(X)                                                                        \
  X(av_frame_alloc) X(av_frame_free) X(av_frame_unref) X(av_frame_move_ref) X(av_malloc)    \
  X(av_free) X(av_log_set_level) X(av_strerror) X(av_pix_fmt_desc_get) X(av_dict_set)       \
  X(av_dict_free) X(av_dict_copy) X(av_rescale_q) X(av_channel_layout_copy)                 \
  X(av_channel_layout_uninit) X(av_channel_layout_default) X(av_audio_fifo_alloc) X(av_audio_fifo_free)                  \
  X(av_audio_fifo_write) X(av_audio_fifo_read) X(av_audio_fifo_size) X(av_frame_get_buffer) \
  X(av_frame_make_writable)
#define DR_AVCODEC(X)                                                                       \
  X(avcodec_find_decoder) X(avcodec_alloc_context3) X(avcodec_parameters_to_context)        \
  X(avcodec_open2) X(avcodec_send_packet) X(avcodec_receive_frame) X(avcodec_flush_buffers) \
  X(avcodec_free_context) X(av_packet_alloc) X(av_packet_free) X(av_packet_unref)           \
  X(avcodec_find_decoder_by_name) X(avcodec_find_encoder_by_name) X(avcodec_find_encoder)   \
  X(avcodec_send_frame) X(avcodec_receive_packet) X(avcodec_parameters_from_context)        \
  X(avcodec_parameters_copy) X(av_packet_rescale_ts)
#define DR_AVFORMAT(X)                                                                      \
  X(avformat_alloc_context) X(avformat_open_input) X(avformat_find_stream_info)             \
  X(av_find_best_stream) X(av_read_frame) X(av_seek_frame) X(avformat_close_input)          \
  X(avio_alloc_context) X(avio_context_free) X(av_index_search_timestamp)                   \
  X(avformat_index_get_entry) X(avformat_index_get_entries_count)                           \
  X(avformat_alloc_output_context2) X(avformat_new_stream) X(avformat_write_header)         \
  X(av_interleaved_write_frame) X(av_write_trailer) X(avformat_free_context) X(avio_flush)
#define DR_SWSCALE(X)                                                                       \
  X(sws_getContext) X(sws_scale) X(sws_freeContext) X(sws_setColorspaceDetails)             \
  X(sws_getCoefficients)
#define DR_SWRESAMPLE(X) X(swr_alloc_set_opts2) X(swr_init) X(swr_convert) X(swr_free) \
  X(swr_get_out_samples)

#define DR_POINTER(name) extern __typeof__(&name) p_##name;
DR_AVUTIL(DR_POINTER)
DR_AVCODEC(DR_POINTER)
DR_AVFORMAT(DR_POINTER)
DR_SWSCALE(DR_POINTER)
DR_SWRESAMPLE(DR_POINTER)
#undef DR_POINTER

/// Bytes FFmpeg reads through Darkroom's descriptor (pread: never reopened by path) or memory.
typedef struct {
  DrVideoSource source;
  int64_t position, size;
} Reader;

int dr_read_bytes(void *opaque, uint8_t *buffer, int size);
int64_t dr_seek_bytes(void *opaque, int64_t offset, int whence);

// One open video: its container, decoder and the packets and frames in flight. Every
// FFmpeg object is made by dr_open_video (the decoder by open_decoder, which
// dr_video_threads_frames also calls to replace it) and freed by dr_close_video, nowhere else.
typedef struct {
  Reader reader;
  AVIOContext *io;
  AVFormatContext *format;
  AVCodecContext *codec;
  const AVCodec *decoder;
  int thread_type;  // the decoder's FF_THREAD_* flags
  AVPacket *packet;
  AVFrame *frame, *best;
  int stream;
  int drained;      // the demuxer is at its end and the decoder was told
  int bad_packets;  // packets the decoder refused (damage), up to a bound
  int64_t packets;  // packets read, up to a bound
  int decoded;      // frames the decoder gave back
} Video;

/// Opens `source`'s video stream, its decoder threaded as `thread_type` says (FF_THREAD_FRAME
/// and/or FF_THREAD_SLICE).
int dr_open_video(Video *v, const DrVideoSource *source, long long max_pixels, int thread_type,
                  char *error, size_t error_size);
void dr_close_video(Video *v);
void dr_av_message(int code, char *text, size_t size);
/// When `frame` is shown, in seconds from the stream's start.
double dr_frame_time(Video *v, const AVFrame *frame);
/// swscale's name for the matrix `frame` is coded with, and whether its range is full.
int dr_scaler_colourspace(const AVFrame *frame);
/// The same for a stream's matrix (`AVColorSpace`) and its frames' height.
int dr_matrix_colourspace(int colorspace, int height);
int dr_full_range(const AVFrame *frame);

#else
#define DR_HAVE_FFMPEG 0
#endif

#endif
