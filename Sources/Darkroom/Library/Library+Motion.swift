extension Library {
  /// The video of a live or motion photo in the library, as its catalog row says: the MOV
  /// beside a Live Photo's still, or the part of a motion photo's file its XMP names.
  ///
  /// A space's asset has the video embedded in its original (a motion photo added to it), as
  /// the space's row says; a Live Photo's MOV is not kept beside a sealed still.
  ///
  /// - Throws: `notFound` for an unknown id, and for an asset without a video.
  package func motionVideo(of id: AssetID) throws(DarkroomError) -> MotionPhoto.Video {
    try storage.motionVideo(of: id)
  }

  /// ``motionVideo(of:)`` of a folder's asset, as its catalog row says.
  func fileMotionVideo(of id: AssetID) throws(DarkroomError) -> MotionPhoto.Video {
    let asset = try asset(id)
    guard
      let video = MotionPhoto.video(
        path: asset.path, embedded: asset.motionVideo, live: asset.liveVideo)
    else { throw MotionPhoto.noVideo(asset.name) }
    return video
  }

  /// The size of an asset's video (``motionVideo(of:)``), in bytes.
  package func motionVideoSize(of id: AssetID) throws(DarkroomError) -> Int {
    let video = try motionVideo(of: id)
    if let range = video.range { return range.length }
    return try Beneath.openFile(video.path, in: rootPath).size
  }

  /// Bytes `part` of an asset's video (all of it for nil), read beneath the library's root.
  ///
  /// - Throws: as ``motionVideo(of:)``; `corrupt` for an embedded video that is not where the
  ///   photo's XMP says; `invalidArgument` for a part past its end; `notFound` for a Live
  ///   Photo's MOV that is gone.
  package func motionVideoBytes(of id: AssetID, part: Range<Int>? = nil) throws(DarkroomError)
    -> [UInt8]
  {
    try storage.motionVideoBytes(of: id, part: part)
  }

  /// ``motionVideoBytes(of:part:)`` of a folder's asset: from its file, beneath the root.
  func fileMotionVideoBytes(of id: AssetID, part: Range<Int>?) throws(DarkroomError)
    -> [UInt8]
  {
    let video = try motionVideo(of: id)
    let file = try Beneath.openFile(video.path, in: rootPath)
    return try MotionPhoto.bytes(of: video, in: file, part: part, name: video.path)
  }
}
