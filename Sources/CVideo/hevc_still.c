// A HEIC's picture decoded by FFmpeg's HEVC decoder: the tiles of a grid (a phone writes 48
// of 512x512 for 12 megapixels) are independent pictures, decoded here side by side on
// several threads, each converted to 8-bit RGB (or grey, for an alpha plane) straight into
// its place on the canvas. (libheif 1.15 decodes them through libde265, a few at once, and
// converts the whole picture after.)
#include "video_private.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DR_HAVE_FFMPEG

typedef struct {
  const DrHEVCGrid *grid;
  unsigned char *canvas;
  atomic_int next;    // the next tile to take
  atomic_int failed;  // set by the first failure; the others stop taking tiles
  pthread_mutex_t lock;
  char *error;
  size_t error_size;
  double deadline;  // CLOCK_MONOTONIC seconds after which no tile starts; INFINITY: none
} Shared;

static double monotonic_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// One thread's decoder: opened for a tile's configuration and kept while the next tile has
// the same one (a phone's tiles share one). Made by open_tile_decoder, freed by close_decoder.
typedef struct {
  AVCodecContext *codec;
  const unsigned char *config;
  AVPacket *packet;
  AVFrame *frame;
} Decoder;

static void close_decoder(Decoder *d) {
  if (d->codec) p_avcodec_free_context(&d->codec);
  if (d->packet) p_av_packet_free(&d->packet);
  if (d->frame) p_av_frame_free(&d->frame);
}

// Keeps the first failure's message; the other threads stop taking tiles.
static void fail(Shared *s, const char *message) {
  pthread_mutex_lock(&s->lock);
  if (!atomic_load(&s->failed)) {
    dr_say(s->error, s->error_size, "%s", message);
    atomic_store(&s->failed, 1);
  }
  pthread_mutex_unlock(&s->lock);
}

static int open_tile_decoder(Decoder *d, const DrHEVCTile *tile, const DrHEVCGrid *grid) {
  if (d->codec && d->config == tile->config) {
    p_avcodec_flush_buffers(d->codec);
    return 0;
  }
  if (d->codec) p_avcodec_free_context(&d->codec);
  const AVCodec *decoder = p_avcodec_find_decoder(AV_CODEC_ID_HEVC);
  if (!decoder) return AVERROR_DECODER_NOT_FOUND;
  d->codec = p_avcodec_alloc_context3(decoder);
  if (!d->codec) return AVERROR(ENOMEM);
  // The hvcC record, as an MP4 track's: parameter sets and the NAL units' length size.
  d->codec->extradata = p_av_malloc(tile->config_length + AV_INPUT_BUFFER_PADDING_SIZE);
  if (!d->codec->extradata) return AVERROR(ENOMEM);
  memcpy(d->codec->extradata, tile->config, tile->config_length);
  memset(d->codec->extradata + tile->config_length, 0, AV_INPUT_BUFFER_PADDING_SIZE);
  d->codec->extradata_size = (int)tile->config_length;
  d->codec->thread_count = 1;  // the tiles are the parallel work
  d->codec->flags |= AV_CODEC_FLAG_LOW_DELAY;
  // A tile's parameter sets may claim any size: FFmpeg refuses a picture past this (the
  // tile's own size and a coding block's padding) before it allocates one.
  d->codec->max_pixels = (int64_t)(grid->tile_width + 64) * (grid->tile_height + 64);
  int rc = p_avcodec_open2(d->codec, decoder, NULL);
  if (rc < 0) return rc;
  d->config = tile->config;
  return 0;
}

// One sample of plane 0 (luma) at (x, y), whatever its depth, scaled to 8 bits.
static int luma8(const AVFrame *frame, int depth, int x, int y) {
  const uint8_t *line = frame->data[0] + (size_t)y * frame->linesize[0];
  if (depth <= 8) return line[x];
  int shift = depth - 8, value = (((const uint16_t *)line)[x] + (1 << (shift - 1))) >> shift;
  return value > 255 ? 255 : value;
}

// Converts the visible part of a decoded tile (`width` x `height` from its top left) into
// the canvas at the tile's place; with grid->halve, each 2x2 block to one pixel (swscale's
// exact area average, tiles of even sides keeping blocks inside a tile) at half the place.
static int place(const AVFrame *frame, const DrHEVCGrid *grid, const DrHEVCTile *tile,
                 int width, int height, unsigned char *canvas) {
  const int halve = grid->halve != 0;
  const int canvas_w = halve ? (grid->width + 1) / 2 : grid->width;
  const int canvas_h = halve ? (grid->height + 1) / 2 : grid->height;
  // A visible part of odd size takes its block's other pixel from the tile's padding.
  int source_w = width, source_h = height;
  if (halve && (source_w & 1) && source_w < frame->width) source_w++;
  if (halve && (source_h & 1) && source_h < frame->height) source_h++;
  const int out_x = halve ? tile->x / 2 : tile->x, out_y = halve ? tile->y / 2 : tile->y;
  const int out_w = halve ? (source_w + 1) / 2 : source_w;
  const int out_h = halve ? (source_h + 1) / 2 : source_h;
  if (out_x + out_w > canvas_w || out_y + out_h > canvas_h) return -1;
  size_t stride = (size_t)canvas_w * grid->bands;
  unsigned char *at = canvas + (size_t)out_y * stride + (size_t)out_x * grid->bands;
  const AVPixFmtDescriptor *descriptor = p_av_pix_fmt_desc_get(frame->format);
  if (!descriptor) return -1;
  if (grid->bands == 1) {  // an alpha plane: its luma, as it is (averaged when halved)
    int depth = descriptor->comp[0].depth;
    for (int row = 0; row < out_h; row++) {
      unsigned char *out = at + (size_t)row * stride;
      for (int i = 0; i < out_w; i++) {
        if (!halve) {
          out[i] = (unsigned char)luma8(frame, depth, i, row);
          continue;
        }
        int x = 2 * i, y = 2 * row, x1 = x + 1 < source_w ? x + 1 : x;
        int y1 = y + 1 < source_h ? y + 1 : y;
        int sum = luma8(frame, depth, x, y) + luma8(frame, depth, x1, y) +
                  luma8(frame, depth, x, y1) + luma8(frame, depth, x1, y1);
        out[i] = (unsigned char)((sum + 2) / 4);
      }
    }
    return 0;
  }
  struct SwsContext *scaler = p_sws_getContext(
      source_w, source_h, frame->format, out_w, out_h, AV_PIX_FMT_RGB24,
      (halve ? SWS_AREA : SWS_BILINEAR) | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL,
      NULL);
  if (!scaler) return -1;
  int matrix = grid->matrix >= 0 ? grid->matrix : frame->colorspace;
  int full = grid->full_range >= 0 ? grid->full_range : dr_full_range(frame);
  // An unspecified matrix is BT.601's, whatever the picture's size (as libheif reads it).
  int colourspace = matrix == AVCOL_SPC_UNSPECIFIED || matrix == AVCOL_SPC_RESERVED
                        ? SWS_CS_ITU601
                        : dr_matrix_colourspace(matrix, frame->height);
  p_sws_setColorspaceDetails(scaler, p_sws_getCoefficients(colourspace), full,
                             p_sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
  unsigned char *planes[4] = {at, NULL, NULL, NULL};
  int strides[4] = {(int)stride, 0, 0, 0};
  int rows = p_sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0,
                         source_h, planes, strides);
  p_sws_freeContext(scaler);
  return rows == out_h ? 0 : -1;
}

static void *work(void *argument) {
  Shared *s = argument;
  const DrHEVCGrid *grid = s->grid;
  Decoder d = {0};
  d.packet = p_av_packet_alloc();
  d.frame = p_av_frame_alloc();
  if (!d.packet || !d.frame) {
    fail(s, "out of memory");
    close_decoder(&d);
    return NULL;
  }
  char text[256], message[400];
  for (;;) {
    if (atomic_load(&s->failed)) break;
    int index = atomic_fetch_add(&s->next, 1);
    if (index >= grid->tile_count) break;
    // A tile decodes in bounded time (its size is checked): the limit is kept between them.
    if (isfinite(s->deadline) && monotonic_seconds() > s->deadline) {
      fail(s, "timed out");
      break;
    }
    const DrHEVCTile *tile = &grid->tiles[index];
    int rc = open_tile_decoder(&d, tile, grid);
    if (rc < 0) {
      dr_av_message(rc, text, sizeof text);
      snprintf(message, sizeof message,
               "damaged image: tile %d's HEVC configuration is refused (%s)", index + 1, text);
      fail(s, message);
      break;
    }
    d.packet->data = (uint8_t *)tile->data;  // not reference-counted: FFmpeg copies it
    d.packet->size = (int)tile->length;
    rc = p_avcodec_send_packet(d.codec, d.packet);
    if (rc >= 0) rc = p_avcodec_send_packet(d.codec, NULL);
    if (rc >= 0) rc = p_avcodec_receive_frame(d.codec, d.frame);
    if (rc < 0) {
      dr_av_message(rc, text, sizeof text);
      snprintf(message, sizeof message, "damaged image: tile %d cannot be decoded (%s)",
               index + 1, text);
      fail(s, message);
      break;
    }
    if (d.frame->decode_error_flags) {  // FFmpeg concealed damage: not the photo's pixels
      snprintf(message, sizeof message, "damaged image: tile %d's data has errors", index + 1);
      fail(s, message);
      break;
    }
    // The part of the canvas the tile covers (the last row and column are cut off).
    int width = grid->width - tile->x, height = grid->height - tile->y;
    if (width > grid->tile_width) width = grid->tile_width;
    if (height > grid->tile_height) height = grid->tile_height;
    if (d.frame->width < width || d.frame->height < height) {
      snprintf(message, sizeof message, "damaged image: tile %d is %dx%d, smaller than %dx%d",
               index + 1, d.frame->width, d.frame->height, width, height);
      fail(s, message);
      break;
    }
    if (place(d.frame, grid, tile, width, height, s->canvas) != 0) {
      const AVPixFmtDescriptor *format = p_av_pix_fmt_desc_get(d.frame->format);
      snprintf(message, sizeof message, "damaged image: tile %d's pixels (%s) cannot be converted",
               index + 1, format ? format->name : "of an unknown format");
      fail(s, message);
      break;
    }
    p_av_frame_unref(d.frame);
  }
  close_decoder(&d);
  return NULL;
}

int dr_hevc_grid(const DrHEVCGrid *grid, unsigned char *canvas, char *error, size_t error_size) {
  if (dr_video_load(error, error_size) != 0) return -1;
  if (grid->width <= 0 || grid->height <= 0 || grid->tile_count <= 0 ||
      grid->tile_width <= 0 || grid->tile_height <= 0 || grid->tile_width > 65536 ||
      grid->tile_height > 65536 || (grid->bands != 1 && grid->bands != 3) ||
      (grid->halve && ((grid->tile_width | grid->tile_height) & 1))) {
    dr_say(error, error_size, "damaged image: its grid is empty");
    return -1;
  }
  for (int i = 0; i < grid->tile_count; i++) {
    const DrHEVCTile *tile = &grid->tiles[i];
    if (tile->length == 0 || tile->length > INT_MAX || tile->config_length == 0 ||
        tile->config_length > INT_MAX / 2 || tile->x < 0 || tile->y < 0 ||
        tile->x >= grid->width || tile->y >= grid->height) {
      dr_say(error, error_size, "damaged image: tile %d is empty or outside the picture", i + 1);
      return -1;
    }
  }
  Shared shared = {.grid = grid, .canvas = canvas, .error = error, .error_size = error_size,
                   .deadline = isfinite(grid->time_left) ? monotonic_seconds() + grid->time_left
                                                         : INFINITY};
  atomic_init(&shared.next, 0);
  atomic_init(&shared.failed, 0);
  pthread_mutex_init(&shared.lock, NULL);
  int threads = grid->threads < 1 ? 1 : grid->threads > 64 ? 64 : grid->threads;
  if (threads > grid->tile_count) threads = grid->tile_count;
  pthread_t helpers[64];
  int started = 0;
  for (int i = 1; i < threads; i++) {
    if (pthread_create(&helpers[started], NULL, work, &shared) != 0) break;  // fewer helpers
    started++;
  }
  work(&shared);
  for (int i = 0; i < started; i++) pthread_join(helpers[i], NULL);
  pthread_mutex_destroy(&shared.lock);
  return atomic_load(&shared.failed) ? -1 : 0;
}

#else  // built without FFmpeg's headers

int dr_hevc_grid(const DrHEVCGrid *grid, unsigned char *canvas, char *error, size_t error_size) {
  (void)grid, (void)canvas;
  return dr_video_load(error, error_size);
}

#endif
