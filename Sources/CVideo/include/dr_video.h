// Darkroom's door to FFmpeg: one frame of a video, chosen, upright-ready and in sRGB.
//
// FFmpeg's libraries (libavformat, libavcodec, libavutil, libswscale) are not linked: like
// libvips, they are loaded with dlopen the first time a video is decoded, so a process that
// never decodes one (a server answering from its cache, `darkroom info`) never pays for them.
// They are compiled against FFmpeg's headers when the build machine has them
// (libavformat-dev, libavcodec-dev, libswscale-dev); without them the functions answer that
// this build reads no video frames.
#ifndef DARKROOM_VIDEO_H
#define DARKROOM_VIDEO_H

#include <stddef.h>
#include <stdint.h>

/// Where the video's bytes are: an open descriptor read with pread (fd >= 0), or memory.
typedef struct {
  int fd;
  const unsigned char *bytes;
  size_t length;
} DrVideoSource;

typedef struct {
  /// The frame is scaled to fit this box (stored orientation), never up; 0: its own size.
  int box_width, box_height;
  /// Refuse a stored frame larger than this many pixels.
  long long max_pixels;
  /// How far into the video (seconds) to look for a frame with content.
  double search_seconds;
} DrVideoOptions;

enum { DR_TRANSFER_SDR = 0, DR_TRANSFER_PQ = 1, DR_TRANSFER_HLG = 2 };

typedef struct {
  /// Band-interleaved 8-bit sRGB, `width` x `height` x 3, malloc()ed: free with dr_video_free.
  unsigned char *pixels;
  int width, height;
  /// The stored frame's size, before scaling.
  int source_width, source_height;
  /// When the chosen frame is shown, in seconds from the start.
  double time;
  /// The frame's spread of brightness (standard deviation of luma, 0-255) and how many
  /// frames were looked at before it was chosen.
  double spread;
  int frames_looked_at;
  /// How many frames the decoder gave back on the way (a look at the first frame or at a
  /// keyframe sought to decodes that frame alone).
  int frames_decoded;
  /// What the stream says of its colour: DR_TRANSFER_*, FFmpeg's AVColorPrimaries value, and
  /// bits per sample.
  int transfer, primaries, bit_depth;
} DrVideoFrame;

/// 0 if FFmpeg's libraries can be loaded (they are, once); else -1 and why, in `error`.
int dr_video_load(char *error, size_t error_size);

/// Decodes a representative frame: the first, unless it is (near) uniform, as a fade from
/// black is; then frames at later times up to `search_seconds`, taking the first with content,
/// else the one with the most. 0 on success; -1 with a message in `error` (a file that is not
/// a video FFmpeg reads, no video stream, no decodable frame, a frame over `max_pixels`).
int dr_video_frame(const DrVideoSource *source, const DrVideoOptions *options, DrVideoFrame *out,
                   char *error, size_t error_size);

/// How a still's pixels are coded, as a HEIF's `nclx` box says (ITU-T H.273 code points); -1
/// for each the bitstream's own.
typedef struct {
  int primaries, transfer, matrix, full_range;
} DrCodedColour;

/// Decodes an AV1 still (an AVIF's primary image item: its OBUs, the sequence header first)
/// with FFmpeg's AV1 decoder (dav1d), one picture held (a 20-megapixel 10-bit 4:4:4 image:
/// 180 MB at the peak, where libheif's decode and conversion peak near 520 MB), scales it
/// into the box as dr_video_frame does and converts it to 8-bit sRGB as a still
/// (dr_hdr_to_srgb8, sRGB's curve). 0 on success; -1 with a message in `error`.
int dr_av1_still(const unsigned char *bytes, size_t length, const DrVideoOptions *options,
                 const DrCodedColour *colour, DrVideoFrame *out, char *error, size_t error_size);

/// One tile of a HEIC's grid (or its one picture): an HEVC picture as a HEIF item holds it.
typedef struct {
  /// The item's `hvcC` record (the box's payload): its parameter sets and NAL length size.
  const unsigned char *config;
  size_t config_length;
  /// The item's data: length-prefixed NAL units of one picture.
  const unsigned char *data;
  size_t length;
  /// Where the tile's top-left pixel goes on the canvas.
  int x, y;
} DrHEVCTile;

/// A picture made of HEVC tiles, decoded onto a canvas (`dr_hevc_grid`).
typedef struct {
  const DrHEVCTile *tiles;
  int tile_count;
  /// Every tile's size (a grid's tiles share one); the last row and column are cut off.
  int tile_width, tile_height;
  /// The picture's size; the canvas is `width` x `height` x `bands` bytes, row after row
  /// (halved, `halve`).
  int width, height;
  /// 3: 8-bit RGB from the tiles' YUV; 1: their luma as it is (an alpha plane).
  int bands;
  /// The container's `nclx` matrix (H.273) and range; -1 for the bitstream's own.
  int matrix, full_range;
  /// Threads to decode tiles on at once (each tile on one).
  int threads;
  /// 1: the canvas is half the picture's size (each side rounded up), each 2x2 block
  /// averaged, for a picture that will be shown at a quarter of its size or less. The
  /// tiles' sides must be even.
  int halve;
  /// Seconds from the call after which no tile is started (the decode then fails with
  /// exactly "timed out"; tiles under way finish); `INFINITY` for no limit.
  double time_left;
} DrHEVCGrid;

/// Decodes each tile with FFmpeg's HEVC decoder, on up to `threads` threads, into its place
/// on `canvas` (the caller's; every byte of it is written when this succeeds). 0 on success;
/// -1 with a message in `error` ("damaged image: tile N ..." for a tile that does not decode,
/// decodes with errors FFmpeg concealed, is smaller than its place or codes a picture larger
/// than a tile; "timed out" past `time_left`; FFmpeg that cannot be loaded).
int dr_hevc_grid(const DrHEVCGrid *grid, unsigned char *canvas, char *error, size_t error_size);

/// Converts pixels coded as ITU-T H.273 says (16-bit RGB, full range) to 8-bit sRGB: linear
/// light relative to diffuse white (203 cd/m2 for PQ and HLG, ITU-R BT.2408; HLG through its
/// BT.2100 OOTF for a 1000 cd/m2 display), primaries converted to BT.709 (from BT.2020, 9, or
/// Display P3, 12; others are taken as BT.709), highlights above 0.75 of white rolled off
/// (extended Reinhard on the largest band) to reach white at `peak_nits`, negative light
/// clipped, then encoded. `transfer`: 16 PQ, 18 HLG, 13 sRGB, anything else BT.1886's gamma
/// 2.4. `video` encodes with BT.1886's inverse (gamma 1/2.4), as a video's SDR grade is
/// mastered and as SDR video frames are shown; else with sRGB's curve (stills).
void dr_hdr_to_srgb8(const uint16_t *in, size_t pixel_count, int transfer, int primaries,
                     double peak_nits, int video, unsigned char *out);

/// What a transcode makes (`dr_video_transcode`).
typedef struct {
  /// The frames are scaled to fit this box (upright orientation), never up; 0: their own size.
  int box_width, box_height;
  /// Refuse stored frames larger than this many pixels, and a video longer than this.
  long long max_pixels;
  double max_seconds;
  /// The part kept, in seconds from the start; `end` <= 0: to the end.
  double start, end;
  /// How far the stored frames turn clockwise to show upright (0, 90, 180, 270): applied.
  int rotation;
  /// x264's constant rate factor and preset (`veryfast`, ...).
  int crf;
  const char *preset;
  /// `mp4` or `mov`.
  const char *container;
  /// 1: a fragmented MP4 (an empty index first, then a fragment a keyframe: playable while
  /// it is written, and written front to back); 0: one index, at the end.
  int fragmented;
  /// 1: every frame goes through `filter`, as 8-bit RGB (HDR tone-mapped first).
  int filtered;
  /// x264's threads: a fixed count gives the same bytes on every machine; 0: as many as the
  /// cores suit.
  int threads;
  /// With `filtered`: when the filters leave every frame one grey band, weighted as the luma
  /// of `grey_matrix` (709: ITU-R BT.709's, 601: BT.601's) and then put through this table of
  /// 256 full-range levels, and the source's own matrix is that one and needs no tone mapping,
  /// the frames take that route on their luma plane (the same grey, a table on the plane the
  /// encoder takes, chroma neutral) and `filter` is not called. NULL: every frame goes
  /// through `filter`.
  const unsigned char *grey_table;
  int grey_matrix;
} DrTranscodeOptions;

/// Called with an upright frame (8-bit RGB, `width` x `height`, rows packed) to filter:
/// sets `out` (owned by the caller of dr_video_transcode, valid until the next call) and its
/// size; with `rgb` NULL, only says the size a frame of `width` x `height` comes out at. Every
/// frame must come out at the same size. Returns 0, or non-zero to stop the transcode.
typedef int (*DrFrameFilter)(void *context, const unsigned char *rgb, int width, int height,
                             const unsigned char **out, int *out_width, int *out_height);

/// Called with bytes of the output and the offset they go at (the muxer goes back to fill in
/// sizes, except in a fragmented MP4); non-zero stops the transcode.
typedef int (*DrTranscodeWrite)(void *context, long long offset, const unsigned char *bytes,
                                int count);

/// Called after each frame with the seconds encoded and the seconds to encode in all;
/// non-zero stops the transcode.
typedef int (*DrTranscodeProgress)(void *context, double done, double total);

/// What a transcode wrote: the encoded frames' size, how many frames it encoded, and how many
/// of them took the grey route (`grey_table`) rather than `filter`.
typedef struct {
  int width, height;
  long long frames, grey_frames;
} DrTranscodeResult;

/// Decodes a video's frames and sound and writes an H.264 (High, yuv420p, BT.709) and AAC
/// file in `options->container`, whose bytes go to `write` (no path is opened). HDR frames (PQ, HLG, BT.2020) are tone-mapped to SDR as posters are. AAC sound is
/// copied, other sound re-encoded as AAC. The container's metadata (creation time, Apple's
/// content identifier) is carried over. 0 on success; -1 with a message in `error` (FFmpeg
/// cannot be loaded, the file is not a video, damage, over a limit, stopped by a callback).
int dr_video_transcode(const DrVideoSource *source, DrTranscodeWrite write,
                       const DrTranscodeOptions *options, DrFrameFilter filter,
                       DrTranscodeProgress progress, void *context,
                       DrTranscodeResult *result, char *error, size_t error_size);

void dr_video_free(void *memory);

#endif
