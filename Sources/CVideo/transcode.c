// Transcoding a video to H.264 and AAC: playable renditions (every browser plays them) and
// the results of edits (frames filtered by the caller). One function, dr_video_transcode;
// every object a transcode keeps (FFmpeg's contexts, frames and scaler, its buffers) is a
// field of its Transcode, made by plan_sizes, open_output, open_audio or convert_frame and
// freed by transcode_close, nowhere else; the frames encode_audio and audio_packet make for
// one call are freed in that call.
#define _GNU_SOURCE
#include "video_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#if DR_HAVE_FFMPEG

// ---------------------------------------------------------------------------------------
// Writing: every byte goes through the caller's callback, with the offset it belongs at (a
// sandboxed worker opens no file and may grow none: it sends the bytes to its parent, which
// writes them). The muxer seeks only to write again (a fragmented MP4 never does).

typedef struct {
  DrTranscodeWrite write;
  void *context;
  int64_t position, size;
} Writer;

#if LIBAVFORMAT_VERSION_MAJOR >= 61
static int write_bytes(void *opaque, const uint8_t *buffer, int size) {
#else
static int write_bytes(void *opaque, uint8_t *buffer, int size) {
#endif
  Writer *writer = opaque;
  if (writer->write(writer->context, writer->position, buffer, size) != 0) return AVERROR(EIO);
  writer->position += size;
  if (writer->position > writer->size) writer->size = writer->position;
  return size;
}

static int64_t seek_writer(void *opaque, int64_t offset, int whence) {
  Writer *writer = opaque;
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return writer->size;
  int64_t base = whence == SEEK_CUR ? writer->position : whence == SEEK_END ? writer->size : 0;
  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return AVERROR(EINVAL);
  if (base + offset < 0) return AVERROR(EINVAL);
  writer->position = base + offset;
  return writer->position;
}

// ---------------------------------------------------------------------------------------
// Turning a plane a quarter turn or a half.

static void turn_plane(const uint8_t *src, int src_stride, int width, int height, int size,
                       uint8_t *dst, int dst_stride, int degrees) {
  for (int y = 0; y < height; y++) {
    const uint8_t *row = src + (size_t)y * src_stride;
    for (int x = 0; x < width; x++) {
      int dx, dy;
      if (degrees == 90) dx = height - 1 - y, dy = x;
      else if (degrees == 180) dx = width - 1 - x, dy = height - 1 - y;
      else dx = y, dy = width - 1 - x;
      uint8_t *to = dst + (size_t)dy * dst_stride + (size_t)dx * size;
      const uint8_t *from = row + (size_t)x * size;
      for (int k = 0; k < size; k++) to[k] = from[k];
    }
  }
}

// ---------------------------------------------------------------------------------------

typedef struct {
  Video in;
  const DrTranscodeOptions *options;
  DrFrameFilter filter;
  DrTranscodeProgress progress;
  void *context;
  // Sound: the input's stream, and either a copy or a decoder, resampler and encoder.
  int audio_stream;
  AVCodecContext *audio_decoder, *audio_encoder;
  SwrContext *resampler;
  AVAudioFifo *fifo;
  AVFrame *audio_frame;
  int64_t audio_samples;  // samples sent to the encoder
  // The output.
  Writer writer;
  AVIOContext *out_io;
  AVFormatContext *out;
  AVStream *video_out, *audio_out;
  AVCodecContext *encoder;
  AVFrame *picture;  // the encoder's input, YUV 4:2:0 at the output size
  AVPacket *packet;
  // Frames on their way: scaled (stored orientation), turned upright, as RGB for a filter.
  struct SwsContext *to_box;
  int box_width, box_height;      // the decoded frame scaled, stored orientation
  int from_width, from_height, from_format;  // the frames to_box was made for
  int upright_width, upright_height;
  int out_width, out_height;      // what is encoded (even sides)
  int rgb_path, wide;             // frames go through RGB (filters, HDR); 16-bit first (HDR)
  int grey_route;                 // the filters are a table on the luma plane (grey_table)
  int grey_matrix;                // the matrix (SWS_CS_*) whose luma that table takes
  unsigned char luma[256];        // that table on the limited-range levels the encoder takes
  unsigned char *rgb, *turned;
  uint16_t *deep;
  AVFrame *scaled;                // YUV at the box size, before a turn (no RGB path)
  double origin;                  // the file's time 0 (seconds): every stream's times count from it
  int64_t start_pts, end_pts;     // the kept part, in the video stream's time base
  int audio_started;              // the first kept sound was placed in time
  int64_t last_pts;
  double total;
  long long frames, grey_frames;  // encoded; of them, through the grey route
  // Where the time goes (DARKROOM_TRANSCODE_TIMES): seconds in decode, scale, filter,
  // conversion for the encoder, encode.
  int timing;
  double times[5];
} Transcode;

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void transcode_close(Transcode *t) {
  if (t->to_box) p_sws_freeContext(t->to_box);
  free(t->rgb), free(t->turned), free(t->deep);
  if (t->scaled) p_av_frame_free(&t->scaled);
  if (t->picture) p_av_frame_free(&t->picture);
  if (t->audio_frame) p_av_frame_free(&t->audio_frame);
  if (t->packet) p_av_packet_free(&t->packet);
  if (t->encoder) p_avcodec_free_context(&t->encoder);
  if (t->audio_encoder) p_avcodec_free_context(&t->audio_encoder);
  if (t->audio_decoder) p_avcodec_free_context(&t->audio_decoder);
  if (t->resampler) p_swr_free(&t->resampler);
  if (t->fifo) p_av_audio_fifo_free(t->fifo);
  if (t->out) p_avformat_free_context(t->out);  // not our AVIO: freed below
  if (t->out_io) {
    p_av_free(t->out_io->buffer);
    p_avio_context_free(&t->out_io);
  }
  dr_close_video(&t->in);
}

static int fail(char *error, size_t size, int code, const char *what) {
  char text[256];
  dr_av_message(code, text, sizeof text);
  dr_say(error, size, "%s (%s)", what, text);
  return -1;
}

static int even(int n) { return n < 2 ? 2 : n & ~1; }

// Sound: copied when it is AAC (as browsers play it in MP4), else decoded and re-encoded.
static int open_audio(Transcode *t, char *error, size_t error_size) {
  AVFormatContext *in = t->in.format;
  t->audio_stream = p_av_find_best_stream(in, AVMEDIA_TYPE_AUDIO, -1, t->in.stream, NULL, 0);
  if (t->audio_stream < 0) {
    t->audio_stream = -1;
    return 0;
  }
  AVCodecParameters *parameters = in->streams[t->audio_stream]->codecpar;
  t->audio_out = p_avformat_new_stream(t->out, NULL);
  if (!t->audio_out) return fail(error, error_size, AVERROR(ENOMEM), "cannot add the sound");
  if (parameters->codec_id == AV_CODEC_ID_AAC) {
    if (p_avcodec_parameters_copy(t->audio_out->codecpar, parameters) < 0)
      return fail(error, error_size, AVERROR(ENOMEM), "cannot copy the sound");
    t->audio_out->codecpar->codec_tag = 0;
    t->audio_out->time_base = in->streams[t->audio_stream]->time_base;
    return 0;
  }
  const AVCodec *decoder = p_avcodec_find_decoder(parameters->codec_id);
  const AVCodec *encoder = p_avcodec_find_encoder(AV_CODEC_ID_AAC);
  if (!decoder || !encoder) {
    dr_say(error, error_size, "its sound is in a format this FFmpeg cannot %s",
           decoder ? "re-encode as AAC" : "decode");
    return -1;
  }
  t->audio_decoder = p_avcodec_alloc_context3(decoder);
  t->audio_encoder = p_avcodec_alloc_context3(encoder);
  if (!t->audio_decoder || !t->audio_encoder ||
      p_avcodec_parameters_to_context(t->audio_decoder, parameters) < 0)
    return fail(error, error_size, AVERROR(ENOMEM), "cannot read the sound");
  int rc = p_avcodec_open2(t->audio_decoder, decoder, NULL);
  if (rc < 0) return fail(error, error_size, rc, "its sound decoder cannot start");
  AVCodecContext *e = t->audio_encoder;
  // AAC takes 8 to 96 kHz; past that (or unknown), 48 kHz.
  int rate = t->audio_decoder->sample_rate;
  if (rate <= 0 || rate > 96000) rate = 48000;
  e->sample_rate = rate;
  e->sample_fmt = AV_SAMPLE_FMT_FLTP;
  int channels = t->audio_decoder->ch_layout.nb_channels;
  if (channels <= 0) return fail(error, error_size, AVERROR(EINVAL), "its sound has no channels");
  // A layout of unspecified order (PCM in a MOV often) is refused by the encoder: the
  // default order for as many channels.
  if (t->audio_decoder->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC) {
    p_av_channel_layout_default(&e->ch_layout, channels);
  } else if (p_av_channel_layout_copy(&e->ch_layout, &t->audio_decoder->ch_layout) < 0) {
    return fail(error, error_size, AVERROR(ENOMEM), "out of memory");
  }
  e->bit_rate = 64000 * (e->ch_layout.nb_channels < 2 ? 1 : 2);
  e->time_base = (AVRational){1, rate};
  if (t->out->oformat->flags & AVFMT_GLOBALHEADER) e->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  rc = p_avcodec_open2(e, encoder, NULL);
  if (rc < 0) return fail(error, error_size, rc, "the AAC encoder cannot start");
  rc = p_swr_alloc_set_opts2(&t->resampler, &e->ch_layout, e->sample_fmt, rate,
                             &t->audio_decoder->ch_layout, t->audio_decoder->sample_fmt,
                             t->audio_decoder->sample_rate, 0, NULL);
  if (rc < 0 || p_swr_init(t->resampler) < 0)
    return fail(error, error_size, rc < 0 ? rc : AVERROR(EINVAL), "its sound cannot be resampled");
  t->fifo = p_av_audio_fifo_alloc(e->sample_fmt, e->ch_layout.nb_channels, e->frame_size * 4);
  t->audio_frame = p_av_frame_alloc();
  if (!t->fifo || !t->audio_frame)
    return fail(error, error_size, AVERROR(ENOMEM), "out of memory");
  if (p_avcodec_parameters_from_context(t->audio_out->codecpar, e) < 0)
    return fail(error, error_size, AVERROR(ENOMEM), "out of memory");
  t->audio_out->time_base = e->time_base;
  return 0;
}

static int write_packet(Transcode *t, AVPacket *packet, AVRational from, AVStream *stream) {
  p_av_packet_rescale_ts(packet, from, stream->time_base);
  packet->stream_index = stream->index;
  return p_av_interleaved_write_frame(t->out, packet);  // takes the packet's reference
}

// Everything `encoder` has ready (all of it, after a NULL frame), into `stream`.
static int drain(Transcode *t, AVCodecContext *encoder, AVStream *stream) {
  for (;;) {
    int rc = p_avcodec_receive_packet(encoder, t->packet);
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return 0;
    if (rc < 0) return rc;
    rc = write_packet(t, t->packet, encoder->time_base, stream);
    if (rc < 0) return rc;
  }
}

// Sends the sound gathered, a frame of the encoder's size at a time (and at the end, the rest).
static int encode_audio(Transcode *t, int last) {
  AVCodecContext *e = t->audio_encoder;
  int size = e->frame_size > 0 ? e->frame_size : 1024;
  while (p_av_audio_fifo_size(t->fifo) >= size || (last && p_av_audio_fifo_size(t->fifo) > 0)) {
    int count = p_av_audio_fifo_size(t->fifo) < size ? p_av_audio_fifo_size(t->fifo) : size;
    AVFrame *frame = p_av_frame_alloc();
    if (!frame) return AVERROR(ENOMEM);
    frame->nb_samples = count;
    frame->format = e->sample_fmt;
    frame->sample_rate = e->sample_rate;
    int rc = p_av_channel_layout_copy(&frame->ch_layout, &e->ch_layout);
    if (rc >= 0) rc = p_av_frame_get_buffer(frame, 0);
    if (rc >= 0 && p_av_audio_fifo_read(t->fifo, (void **)frame->data, count) < count)
      rc = AVERROR(EIO);
    if (rc >= 0) {
      frame->pts = t->audio_samples;
      t->audio_samples += count;
      rc = p_avcodec_send_frame(e, frame);
    }
    p_av_frame_free(&frame);
    if (rc < 0) return rc;
    if ((rc = drain(t, t->audio_encoder, t->audio_out)) < 0) return rc;
  }
  if (last) {
    int rc = p_avcodec_send_frame(e, NULL);
    if (rc < 0) return rc;
    return drain(t, t->audio_encoder, t->audio_out);
  }
  return 0;
}

// One packet of sound: copied (its times moved by the trim), or decoded into the FIFO.
static int audio_packet(Transcode *t, AVPacket *packet) {
  AVStream *stream = t->in.format->streams[t->audio_stream];
  AVRational base = stream->time_base;
  // Times from the file's origin, as the video's: a sound that starts later stays later.
  double at = packet->pts == AV_NOPTS_VALUE ? 0 : packet->pts * av_q2d(base) - t->origin;
  const DrTranscodeOptions *o = t->options;
  if (!t->audio_decoder) {
    if (at < o->start - 1e-6 || (o->end > 0 && at >= o->end)) return 0;
    int64_t shift = (int64_t)llround((t->origin + o->start) / av_q2d(base));
    if (packet->pts != AV_NOPTS_VALUE) packet->pts -= shift;
    if (packet->dts != AV_NOPTS_VALUE) packet->dts -= shift;
    packet->pos = -1;
    return write_packet(t, packet, base, t->audio_out);
  }
  int rc = p_avcodec_send_packet(t->audio_decoder, packet);
  if (rc < 0) return 0;  // a damaged packet of sound is skipped
  for (;;) {
    rc = p_avcodec_receive_frame(t->audio_decoder, t->audio_frame);
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return 0;
    if (rc < 0) return 0;
    double when = t->audio_frame->pts == AV_NOPTS_VALUE
                      ? at
                      : t->audio_frame->pts * av_q2d(base) - t->origin;
    if (when >= o->start - 1e-6 && (o->end <= 0 || when < o->end)) {
      if (!t->audio_started) {  // the first sound kept, at its time in the kept part
        t->audio_started = 1;
        t->audio_samples = (int64_t)llround(fmax(0, when - o->start) * t->audio_encoder->sample_rate);
      }
      int most = p_swr_get_out_samples(t->resampler, t->audio_frame->nb_samples);
      AVFrame *converted = p_av_frame_alloc();
      if (!converted) return AVERROR(ENOMEM);
      converted->nb_samples = most;
      converted->format = t->audio_encoder->sample_fmt;
      converted->sample_rate = t->audio_encoder->sample_rate;
      rc = p_av_channel_layout_copy(&converted->ch_layout, &t->audio_encoder->ch_layout);
      if (rc >= 0) rc = p_av_frame_get_buffer(converted, 0);
      int count = rc < 0 ? rc
                         : p_swr_convert(t->resampler, converted->data, most,
                                         (const uint8_t **)t->audio_frame->data,
                                         t->audio_frame->nb_samples);
      if (count > 0 && p_av_audio_fifo_write(t->fifo, (void **)converted->data, count) < count)
        count = AVERROR(ENOMEM);
      p_av_frame_free(&converted);
      if (count < 0) return count;
      if ((rc = encode_audio(t, 0)) < 0) return rc;
    }
    p_av_frame_unref(t->audio_frame);
  }
}

// A table of full-range grey levels as one on limited-range luma (16-235, as the scaler
// gives it and the encoder takes it), rounded as rgb_to_yuv420 rounds a grey pixel.
static void grey_levels(const unsigned char *table, unsigned char *out) {
  for (int y = 0; y < 256; y++) {
    long full = lround((y - 16) * 255.0 / 219.0);
    full = full < 0 ? 0 : full > 255 ? 255 : full;
    out[y] = (unsigned char)lround(16 + table[full] * 219.0 / 255.0);
  }
}

// Whether frames of `colorspace` (an AVColorSpace; unspecified: guessed from the height, as
// players guess) carry the luma of `matrix` (SWS_CS_ITU709 or SWS_CS_ITU601) in their Y
// plane. RGB, YCgCo and other codings do not.
static int codes_luma(int colorspace, int height, int matrix) {
  int y_is_luma = colorspace == AVCOL_SPC_BT709 || colorspace == AVCOL_SPC_BT470BG ||
                  colorspace == AVCOL_SPC_SMPTE170M || colorspace == AVCOL_SPC_UNSPECIFIED;
  return y_is_luma && dr_matrix_colourspace(colorspace, height) == matrix;
}

// The buffers of the RGB route at the box's size: the frame, its turn, its 16-bit first
// pass (HDR). 0, or AVERROR(ENOMEM).
static int rgb_buffers(Transcode *t) {
  size_t box = (size_t)t->box_width * t->box_height;
  int turns = t->options->rotation != 0;
  t->rgb = malloc(box * 3);
  t->turned = turns ? malloc(box * 3) : NULL;
  t->deep = t->wide ? malloc(box * 3 * sizeof *t->deep) : NULL;
  return !t->rgb || (turns && !t->turned) || (t->wide && !t->deep) ? AVERROR(ENOMEM) : 0;
}

// Frames leave the grey route for the RGB one (and the filters) from here on: a frame says
// its matrix is not the one the stream said (a new parameter set part way).
static int leave_grey_route(Transcode *t) {
  if (rgb_buffers(t) != 0) return AVERROR(ENOMEM);
  t->grey_route = 0, t->rgb_path = 1;
  return 0;
}

// The output's sides, and the frames' way there: the box each frame is scaled into (stored
// orientation), upright after the turn, and what a filter makes of that.
static int plan_sizes(Transcode *t, char *error, size_t error_size) {
  const DrTranscodeOptions *o = t->options;
  AVCodecParameters *p = t->in.format->streams[t->in.stream]->codecpar;
  int turned = o->rotation == 90 || o->rotation == 270;
  int up_w = turned ? p->height : p->width, up_h = turned ? p->width : p->height;
  double scale = 1;
  if (o->box_width > 0 && o->box_height > 0)
    scale = fmin(1, fmin((double)o->box_width / up_w, (double)o->box_height / up_h));
  t->upright_width = even((int)lround(up_w * scale));
  t->upright_height = even((int)lround(up_h * scale));
  t->box_width = turned ? t->upright_height : t->upright_width;
  t->box_height = turned ? t->upright_width : t->upright_height;
  int trc = p->color_trc, primaries = p->color_primaries;
  t->wide = trc == AVCOL_TRC_SMPTE2084 || trc == AVCOL_TRC_ARIB_STD_B67 ||
            primaries == AVCOL_PRI_BT2020 || primaries == AVCOL_PRI_SMPTE432;
  t->rgb_path = o->filtered || t->wide;
  t->out_width = t->upright_width, t->out_height = t->upright_height;
  t->grey_matrix = o->grey_matrix == 709 ? SWS_CS_ITU709 : o->grey_matrix == 601 ? SWS_CS_ITU601 : -1;
  if (o->filtered && o->grey_table && !t->wide && codes_luma(p->color_space, p->height, t->grey_matrix)) {
    t->grey_route = 1, t->rgb_path = 0;
    grey_levels(o->grey_table, t->luma);
  } else if (o->filtered) {
    int w = 0, h = 0;
    if (t->filter(t->context, NULL, t->upright_width, t->upright_height, NULL, &w, &h) != 0 ||
        w < 2 || h < 2) {
      dr_say(error, error_size, "the filters leave no picture of a %dx%d frame", t->upright_width,
             t->upright_height);
      return -1;
    }
    t->out_width = even(w), t->out_height = even(h);
  }
  if (t->rgb_path) {
    if (rgb_buffers(t) != 0) return fail(error, error_size, AVERROR(ENOMEM), "out of memory");
  } else if (o->rotation) {
    t->scaled = p_av_frame_alloc();
    if (!t->scaled) return fail(error, error_size, AVERROR(ENOMEM), "out of memory");
    t->scaled->format = AV_PIX_FMT_YUV420P;
    t->scaled->width = t->box_width, t->scaled->height = t->box_height;
    int rc = p_av_frame_get_buffer(t->scaled, 0);
    if (rc < 0) return fail(error, error_size, rc, "out of memory");
  }
  return 0;
}

static int open_output(Transcode *t, DrTranscodeWrite write, char *error, size_t error_size) {
  const DrTranscodeOptions *o = t->options;
  int rc = p_avformat_alloc_output_context2(&t->out, NULL, o->container, NULL);
  if (rc < 0 || !t->out) return fail(error, error_size, rc, "cannot make the container");
  t->writer.write = write;
  t->writer.context = t->context;
  unsigned char *buffer = p_av_malloc(1 << 16);
  if (buffer)
    t->out_io = p_avio_alloc_context(buffer, 1 << 16, 1, &t->writer, NULL, write_bytes, seek_writer);
  if (!t->out_io) {
    if (buffer) p_av_free(buffer);
    return fail(error, error_size, AVERROR(ENOMEM), "out of memory");
  }
  t->out->pb = t->out_io;
  t->out->flags |= AVFMT_FLAG_CUSTOM_IO;
  p_av_dict_copy(&t->out->metadata, t->in.format->metadata, 0);

  AVStream *in = t->in.format->streams[t->in.stream];
  const AVCodec *codec = p_avcodec_find_encoder_by_name("libx264");
  if (!codec) {
    dr_say(error, error_size, "this FFmpeg has no H.264 encoder (libx264)");
    return -1;
  }
  t->encoder = p_avcodec_alloc_context3(codec);
  t->video_out = p_avformat_new_stream(t->out, NULL);
  t->packet = p_av_packet_alloc();
  t->picture = p_av_frame_alloc();
  if (!t->encoder || !t->video_out || !t->packet || !t->picture)
    return fail(error, error_size, AVERROR(ENOMEM), "out of memory");
  AVCodecContext *e = t->encoder;
  e->width = t->out_width, e->height = t->out_height;
  e->pix_fmt = AV_PIX_FMT_YUV420P;
  e->time_base = in->time_base;
  AVRational rate = in->avg_frame_rate.num > 0 ? in->avg_frame_rate : in->r_frame_rate;
  if (rate.num > 0 && rate.den > 0) {
    e->framerate = rate;
    e->gop_size = (int)fmin(600, fmax(1, lround(2 * av_q2d(rate))));  // a keyframe each 2 s
  }
  e->sample_aspect_ratio = (AVRational){1, 1};
  AVCodecParameters *p = in->codecpar;
  if (t->rgb_path) {
    e->colorspace = AVCOL_SPC_BT709;
    e->color_primaries = AVCOL_PRI_BT709;
    e->color_trc = AVCOL_TRC_BT709;
  } else if (p->color_space == AVCOL_SPC_UNSPECIFIED) {
    // Untagged: said as players (and the posters) take it, BT.709 from 720 lines, else
    // BT.601; the output may be smaller, so the guess is written down.
    int hd = p->height >= 720;
    e->colorspace = hd ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
    e->color_primaries = hd ? AVCOL_PRI_BT709 : AVCOL_PRI_SMPTE170M;
    e->color_trc = hd ? AVCOL_TRC_BT709 : AVCOL_TRC_SMPTE170M;
  } else {  // the source's own colour, as it is: only its range changes
    e->colorspace = p->color_space;
    e->color_primaries = p->color_primaries;
    e->color_trc = p->color_trc;
  }
  e->color_range = AVCOL_RANGE_MPEG;
  // x264's bytes depend on its thread count: a fixed count (o->threads) gives an edit the
  // same bytes on every machine; 0 lets it use the cores.
  e->thread_count = o->threads > 0 ? o->threads : 0;
  if (t->out->oformat->flags & AVFMT_GLOBALHEADER) e->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  AVDictionary *settings = NULL;
  char crf[16];
  snprintf(crf, sizeof crf, "%d", o->crf > 0 ? o->crf : 23);
  p_av_dict_set(&settings, "preset", o->preset && o->preset[0] ? o->preset : "veryfast", 0);
  p_av_dict_set(&settings, "crf", crf, 0);
  p_av_dict_set(&settings, "profile", "high", 0);
  rc = p_avcodec_open2(e, codec, &settings);
  p_av_dict_free(&settings);
  if (rc < 0) return fail(error, error_size, rc, "the H.264 encoder cannot start");
  if (p_avcodec_parameters_from_context(t->video_out->codecpar, e) < 0)
    return fail(error, error_size, AVERROR(ENOMEM), "out of memory");
  t->video_out->time_base = e->time_base;
  t->video_out->avg_frame_rate = e->framerate;
  t->picture->format = AV_PIX_FMT_YUV420P;
  t->picture->width = e->width, t->picture->height = e->height;
  rc = p_av_frame_get_buffer(t->picture, 0);
  if (rc < 0) return fail(error, error_size, rc, "out of memory");
  if (open_audio(t, error, error_size) != 0) return -1;
  AVDictionary *flags = NULL;
  p_av_dict_set(&flags, "movflags",
                o->fragmented ? "+frag_keyframe+empty_moov+delay_moov+default_base_moof+use_metadata_tags"
                              : "+use_metadata_tags",
                0);
  rc = p_avformat_write_header(t->out, &flags);
  p_av_dict_free(&flags);
  if (rc < 0) return fail(error, error_size, rc, "cannot write the container's header");
  return 0;
}

// 8-bit RGB (full range, BT.709 primaries) to YUV 4:2:0, limited range, BT.709's matrix,
// in 16.16 fixed point; chroma from the mean of each 2x2 block (the RGB mean: chroma is
// linear in it). swscale's own path from packed RGB is scalar C in FFmpeg 5 (4.5 ms a
// 1080p frame here); this one, which the compiler vectorises, takes about a third of that.
static void rgb_to_yuv420(const uint8_t *rgb, int stride, int width, int height, uint8_t *y_plane,
                          int y_stride, uint8_t *u_plane, int u_stride, uint8_t *v_plane,
                          int v_stride) {
  const double kr = 0.2126, kb = 0.0722, kg = 1 - kr - kb;
  const double ys = 219.0 / 255, cs = 224.0 / 255;
  const int yr = (int)lround(ys * kr * 65536), yg = (int)lround(ys * kg * 65536),
            yb = (int)lround(ys * kb * 65536);
  const int ur = (int)lround(-cs * kr / (2 * (1 - kb)) * 65536),
            ug = (int)lround(-cs * kg / (2 * (1 - kb)) * 65536), ub = (int)lround(cs * 0.5 * 65536);
  const int vr = (int)lround(cs * 0.5 * 65536), vg = (int)lround(-cs * kg / (2 * (1 - kr)) * 65536),
            vb = (int)lround(-cs * kb / (2 * (1 - kr)) * 65536);
  for (int y = 0; y < height; y++) {
    const uint8_t *p = rgb + (size_t)y * stride;
    uint8_t *out = y_plane + (size_t)y * y_stride;
    for (int x = 0; x < width; x++, p += 3)
      out[x] = (uint8_t)((yr * p[0] + yg * p[1] + yb * p[2] + (16 << 16) + 32768) >> 16);
  }
  for (int y = 0; y < height / 2; y++) {
    const uint8_t *a = rgb + (size_t)(2 * y) * stride, *b = a + stride;
    uint8_t *u = u_plane + (size_t)y * u_stride, *v = v_plane + (size_t)y * v_stride;
    for (int x = 0; x < width / 2; x++, a += 6, b += 6) {
      int r = a[0] + a[3] + b[0] + b[3], g = a[1] + a[4] + b[1] + b[4],
          bl = a[2] + a[5] + b[2] + b[5];  // four pixels' sums
      int cu = (ur * r + ug * g + ub * bl + (512 << 16) + 131072) >> 18;
      int cv = (vr * r + vg * g + vb * bl + (512 << 16) + 131072) >> 18;
      u[x] = (uint8_t)(cu < 0 ? 0 : cu > 255 ? 255 : cu);
      v[x] = (uint8_t)(cv < 0 ? 0 : cv > 255 ? 255 : cv);
    }
  }
}

// The filters on the grey route: the luma plane through the table, chroma neutral.
static void grey_frame(Transcode *t) {
  double started = t->timing ? now_seconds() : 0;
  AVFrame *f = t->picture;
  for (int y = 0; y < t->out_height; y++) {
    uint8_t *row = f->data[0] + (size_t)y * f->linesize[0];
    for (int x = 0; x < t->out_width; x++) row[x] = t->luma[row[x]];
  }
  for (int plane = 1; plane < 3; plane++)
    for (int y = 0; y < t->out_height / 2; y++)
      memset(f->data[plane] + (size_t)y * f->linesize[plane], 128, t->out_width / 2);
  if (t->timing) t->times[2] += now_seconds() - started;
}

// A decoded frame into the encoder's picture: scaled into the box, turned upright, through
// RGB and the filter where it must, YUV 4:2:0 in limited range.
static int convert_frame(Transcode *t, AVFrame *frame, char *error, size_t error_size) {
  const DrTranscodeOptions *o = t->options;
  // A stream may change its frames' size or format part way (new parameter sets): the
  // scaler is made again for them, within the pixel limit; and for RGB when a frame's
  // matrix is not the one the grey route takes.
  int off_grey = t->grey_route && !codes_luma(frame->colorspace, frame->height, t->grey_matrix);
  if (t->to_box && (frame->width != t->from_width || frame->height != t->from_height ||
                    frame->format != t->from_format || off_grey)) {
    p_sws_freeContext(t->to_box);
    t->to_box = NULL;
  }
  if (!t->to_box) {
    if (frame->width <= 0 || frame->height <= 0 ||
        (long long)frame->width * frame->height > o->max_pixels) {
      dr_say(error, error_size, "damaged video: a frame of %dx%d where %lld pixels at most",
             frame->width, frame->height, o->max_pixels);
      return -1;
    }
    t->from_width = frame->width, t->from_height = frame->height, t->from_format = frame->format;
    if (off_grey) {
      int rc = leave_grey_route(t);
      if (rc < 0) return fail(error, error_size, rc, "out of memory");
    }
    enum AVPixelFormat target =
        !t->rgb_path ? AV_PIX_FMT_YUV420P : t->wide ? AV_PIX_FMT_RGB48 : AV_PIX_FMT_RGB24;
    t->to_box = p_sws_getContext(frame->width, frame->height, frame->format, t->box_width,
                                 t->box_height, target, SWS_BICUBIC, NULL, NULL, NULL);
    if (!t->to_box) {
      dr_say(error, error_size, "its frames' pixel format cannot be converted");
      return -1;
    }
    const int *in = p_sws_getCoefficients(dr_scaler_colourspace(frame));
    p_sws_setColorspaceDetails(t->to_box, in, dr_full_range(frame),
                               t->rgb_path ? p_sws_getCoefficients(SWS_CS_DEFAULT) : in,
                               t->rgb_path ? 1 : 0, 0, 1 << 16, 1 << 16);
  }
  int rc = p_av_frame_make_writable(t->picture);
  if (rc < 0) return fail(error, error_size, rc, "out of memory");
  if (!t->rgb_path) {
    double began = t->timing ? now_seconds() : 0;
    AVFrame *into = o->rotation ? t->scaled : t->picture;
    if (p_sws_scale(t->to_box, (const uint8_t *const *)frame->data, frame->linesize, 0,
                    frame->height, into->data, into->linesize) <= 0) {
      dr_say(error, error_size, "a frame cannot be converted");
      return -1;
    }
    if (o->rotation) {
      for (int plane = 0; plane < 3; plane++) {
        int shift = plane ? 1 : 0;
        turn_plane(into->data[plane], into->linesize[plane], t->box_width >> shift,
                   t->box_height >> shift, 1, t->picture->data[plane], t->picture->linesize[plane],
                   o->rotation);
      }
    }
    if (t->timing) t->times[1] += now_seconds() - began;
    if (t->grey_route) grey_frame(t);
    return 0;
  }
  size_t count = (size_t)t->box_width * t->box_height;
  double started = t->timing ? now_seconds() : 0;
  uint8_t *planes[4] = {t->wide ? (uint8_t *)t->deep : t->rgb, NULL, NULL, NULL};
  int strides[4] = {t->box_width * 3 * (t->wide ? 2 : 1), 0, 0, 0};
  if (p_sws_scale(t->to_box, (const uint8_t *const *)frame->data, frame->linesize, 0,
                  frame->height, planes, strides) <= 0) {
    dr_say(error, error_size, "a frame cannot be converted to RGB");
    return -1;
  }
  if (t->wide) dr_hdr_to_srgb8(t->deep, count, frame->color_trc, frame->color_primaries, 1000.0, 1,
                               t->rgb);
  const unsigned char *upright = t->rgb;
  if (o->rotation) {
    turn_plane(t->rgb, t->box_width * 3, t->box_width, t->box_height, 3, t->turned,
               t->upright_width * 3, o->rotation);
    upright = t->turned;
  }
  const unsigned char *shown = upright;
  int width = t->upright_width, height = t->upright_height;
  if (t->timing) {
    double at = now_seconds();
    t->times[1] += at - started;
    started = at;
  }
  if (o->filtered) {
    if (t->filter(t->context, upright, t->upright_width, t->upright_height, &shown, &width,
                  &height) != 0 || !shown) {
      dr_say(error, error_size, "stopped: the frame at %lld could not be filtered", t->frames);
      return -1;
    }
    if (even(width) != t->out_width || even(height) != t->out_height) {
      dr_say(error, error_size, "the filters made a %dx%d frame of one that made %dx%d", width,
             height, t->out_width, t->out_height);
      return -1;
    }
  }
  if (t->timing) {
    double at = now_seconds();
    t->times[2] += at - started;
    started = at;
  }
  // An odd side of a filter's result loses its last row or column.
  rgb_to_yuv420(shown, width * 3, t->out_width, t->out_height, t->picture->data[0],
                t->picture->linesize[0], t->picture->data[1], t->picture->linesize[1],
                t->picture->data[2], t->picture->linesize[2]);
  if (t->timing) t->times[3] += now_seconds() - started;
  return 0;
}

// One decoded frame: encoded if it is in the kept part. 1 when the kept part is over.
static int video_frame(Transcode *t, AVFrame *frame, char *error, size_t error_size) {
  int64_t pts = frame->best_effort_timestamp;
  if (pts == AV_NOPTS_VALUE) pts = t->last_pts == INT64_MIN ? t->start_pts : t->start_pts + t->last_pts + 1;
  if (pts < t->start_pts) return 0;
  if (t->end_pts != AV_NOPTS_VALUE && pts >= t->end_pts) return 1;
  int64_t at = pts - t->start_pts;
  if (t->last_pts != INT64_MIN && at <= t->last_pts) return 0;  // a time given twice
  // A header may understate the length, or give none: the limit holds while decoding too.
  if (t->options->max_seconds > 0 && at * av_q2d(t->encoder->time_base) > t->options->max_seconds) {
    dr_say(error, error_size, "video runs past %.0f s, over the limit of %.0f s",
           t->options->max_seconds, t->options->max_seconds);
    return -1;
  }
  if (convert_frame(t, frame, error, error_size) != 0) return -1;
  if (t->grey_route) t->grey_frames++;
  t->picture->pts = at;
  double started = t->timing ? now_seconds() : 0;
  int rc = p_avcodec_send_frame(t->encoder, t->picture);
  if (rc >= 0) rc = drain(t, t->encoder, t->video_out);
  if (t->timing) t->times[4] += now_seconds() - started;
  if (rc < 0) return fail(error, error_size, rc, "cannot encode a frame");
  t->last_pts = at;
  t->frames++;
  double seconds = (double)at * av_q2d(t->encoder->time_base);
  if (t->progress && t->progress(t->context, seconds, t->total) != 0) {
    dr_say(error, error_size, "stopped");
    return -1;
  }
  return 0;
}

// Every frame the decoder has ready; 1 when the kept part is over.
static int decoded_frames(Transcode *t, char *error, size_t error_size) {
  for (;;) {
    p_av_frame_unref(t->in.frame);
    double started = t->timing ? now_seconds() : 0;
    int rc = p_avcodec_receive_frame(t->in.codec, t->in.frame);
    if (t->timing) t->times[0] += now_seconds() - started;
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return 0;
    if (rc < 0) {
      if (++t->in.bad_packets > 64) return fail(error, error_size, rc, "damaged video");
      continue;
    }
    rc = video_frame(t, t->in.frame, error, error_size);
    if (rc != 0) return rc;
  }
}

int dr_video_transcode(const DrVideoSource *source, DrTranscodeWrite write,
                       const DrTranscodeOptions *options,
                       DrFrameFilter filter, DrTranscodeProgress progress, void *context,
                       DrTranscodeResult *result, char *error, size_t error_size) {
  memset(result, 0, sizeof *result);
  if (dr_video_load(error, error_size) != 0) return -1;
  if (options->filtered && !filter) {
    dr_say(error, error_size, "a filtered transcode needs its filter");
    return -1;
  }
  Transcode t;
  memset(&t, 0, sizeof t);
  t.options = options, t.filter = filter, t.progress = progress, t.context = context;
  t.audio_stream = -1;
  t.last_pts = INT64_MIN;
  t.timing = getenv("DARKROOM_TRANSCODE_TIMES") != NULL;
  double began = now_seconds();
  int rc = -1;
  if (dr_open_video(&t.in, source, options->max_pixels, FF_THREAD_FRAME | FF_THREAD_SLICE, error,
                    error_size) != 0)
    goto done;
  AVStream *stream = t.in.format->streams[t.in.stream];
  double base = av_q2d(stream->time_base);
  double duration = stream->duration != AV_NOPTS_VALUE
                        ? (double)stream->duration * base
                        : (t.in.format->duration > 0 ? (double)t.in.format->duration / AV_TIME_BASE
                                                     : 0);
  if (options->max_seconds > 0 && duration > options->max_seconds) {
    dr_say(error, error_size, "video is %.0f s long, over the limit of %.0f s", duration,
           options->max_seconds);
    goto done;
  }
  if (options->start < 0 || (options->end > 0 && options->end <= options->start) ||
      (duration > 0 && options->start >= duration)) {
    dr_say(error, error_size, "cannot keep %.3f s to %.3f s of a video of %.3f s", options->start,
           options->end, duration);
    goto done;
  }
  // Time 0: the container's start, else the earliest stream's (video and sound keep their
  // offset from each other).
  if (t.in.format->start_time != AV_NOPTS_VALUE) {
    t.origin = (double)t.in.format->start_time / AV_TIME_BASE;
  } else {
    t.origin = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time * base;
  }
  t.start_pts = (int64_t)llround((t.origin + options->start) / base);
  t.end_pts =
      options->end > 0 ? (int64_t)llround((t.origin + options->end) / base) : AV_NOPTS_VALUE;
  double end = options->end > 0 && (duration <= 0 || options->end < duration) ? options->end
                                                                               : duration;
  t.total = end - options->start;
  if (plan_sizes(&t, error, error_size) != 0 || open_output(&t, write, error, error_size) != 0)
    goto done;
  if (options->start > 0 &&
      p_av_seek_frame(t.in.format, t.in.stream, t.start_pts, AVSEEK_FLAG_BACKWARD) >= 0)
    p_avcodec_flush_buffers(t.in.codec);
  int over = 0, read_error = 0;
  while (!over) {
    int status = p_av_read_frame(t.in.format, t.in.packet);
    if (status < 0) {
      if (status != AVERROR_EOF) read_error = status;
      break;
    }
    if (t.in.packet->stream_index == t.in.stream) {
      double started = t.timing ? now_seconds() : 0;
      status = p_avcodec_send_packet(t.in.codec, t.in.packet);
      if (t.timing) t.times[0] += now_seconds() - started;
      if (status < 0 && status != AVERROR(EAGAIN) && ++t.in.bad_packets > 64) {
        p_av_packet_unref(t.in.packet);
        fail(error, error_size, status, "damaged video: its frames cannot be decoded");
        goto done;
      }
      over = decoded_frames(&t, error, error_size);
    } else if (t.in.packet->stream_index == t.audio_stream) {
      status = audio_packet(&t, t.in.packet);
      if (status < 0) {
        p_av_packet_unref(t.in.packet);
        fail(error, error_size, status, "cannot write the sound");
        goto done;
      }
    }
    p_av_packet_unref(t.in.packet);
    if (over < 0) goto done;
  }
  if (!over) {
    p_avcodec_send_packet(t.in.codec, NULL);
    if (decoded_frames(&t, error, error_size) < 0) goto done;
  }
  if (t.frames == 0) {
    char text[256] = "no frame";
    if (read_error) dr_av_message(read_error, text, sizeof text);
    dr_say(error, error_size, "damaged video: no frame can be decoded (%s)", text);
    goto done;
  }
  double written = (double)t.last_pts * av_q2d(t.encoder->time_base);
  // Frames that stop well before the end the header gives: a file cut short.
  if (t.total > 0 && written + 1.0 < t.total) {
    dr_say(error, error_size, "damaged video: its frames stop at %.1f s of %.1f s", written,
           t.total);
    goto done;
  }
  int status = p_avcodec_send_frame(t.encoder, NULL);
  if (status >= 0) status = drain(&t, t.encoder, t.video_out);
  if (status >= 0 && t.audio_encoder) {
    // The sound the decoder still holds, then the encoder's.
    AVPacket *none = p_av_packet_alloc();
    if (none) {
      none->data = NULL, none->size = 0;
      audio_packet(&t, none);
      p_av_packet_free(&none);
    }
    status = encode_audio(&t, 1);
  }
  if (status >= 0) status = p_av_write_trailer(t.out);
  if (status >= 0) p_avio_flush(t.out_io);
  if (status < 0) {
    fail(error, error_size, status, "cannot finish the file");
    goto done;
  }
  result->width = t.out_width, result->height = t.out_height;
  result->frames = t.frames, result->grey_frames = t.grey_frames;
  rc = 0;
  if (t.timing)
    fprintf(stderr,
            "transcode: %lld frames in %.2f s: decode %.2f, scale %.2f, filter %.2f, to YUV %.2f, "
            "encode %.2f (s, this thread); %lld through the luma table\n",
            t.frames, now_seconds() - began, t.times[0], t.times[1], t.times[2], t.times[3],
            t.times[4], t.grey_frames);
done:
  transcode_close(&t);
  return rc;
}

#else  // built without FFmpeg's headers

int dr_video_transcode(const DrVideoSource *source, DrTranscodeWrite write,
                       const DrTranscodeOptions *options,
                       DrFrameFilter filter, DrTranscodeProgress progress, void *context,
                       DrTranscodeResult *result, char *error, size_t error_size) {
  (void)source, (void)write, (void)options, (void)filter, (void)progress, (void)context;
  memset(result, 0, sizeof *result);
  return dr_video_load(error, error_size);
}

#endif
