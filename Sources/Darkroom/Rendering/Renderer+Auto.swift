extension Renderer {
  /// The side of the image Auto looks at: enough for a histogram and an average colour.
  static let autoSide = 384

  /// `graph` with each `auto` replaced by the filters Auto chooses for the image as the
  /// steps before it leave it (looked at `autoSide` pixels wide), so that what is stored
  /// and replayed is explicit. A graph without `auto` is returned as it is.
  ///
  /// - Throws: What rendering the source small throws (it decodes as a thumbnail does, in
  ///   a worker for the formats that go there).
  func resolvingAuto(_ graph: FilterGraph, of source: ImageSource) throws(DarkroomError)
    -> FilterGraph
  {
    guard graph.nodes.contains(where: { $0.op == AutoFilter.name }) else { return graph }
    var spec = RenditionSpec(.aspectThumbnail)
    spec.targetWidth = Self.autoSide
    spec.targetHeight = Self.autoSide
    spec.format = .png
    spec.metadata = .strip
    spec.foreignEdit = .hidden
    let small = try render(source, spec)
    let upright = try AssetMetadata.read(source)
    let scale = Double(small.width) / Double(max(1, upright.displayWidth))
    var nodes: [FilterNode] = []
    for node in graph.nodes {
      guard node.op == AutoFilter.name else {
        nodes.append(node)
        continue
      }
      let before = try FilterGraph(nodes: nodes).scalingPixels(by: scale)
      let rgb = try Vips.attributingErrors(file: source.name) { () throws(DarkroomError) in
        try PinnedBytes.borrowing(small.bytes) { pinned throws(DarkroomError) in
          let image = try VipsImage.open(buffer: pinned, name: source.name, sequential: false)
          return try Self.rgbBytes(before.apply(to: image.srgb()))
        }
      }
      let strength: Double
      if case .number(let value)? = node.params["strength"] {
        strength = value
      } else {
        strength = 1
      }
      nodes += try AutoFilter.choose(rgb: rgb, strength: strength)
    }
    return FilterGraph(nodes: nodes, description: graph.description)
  }

  /// The pixels as three bytes each (grey repeated, alpha dropped).
  private static func rgbBytes(_ image: VipsImage) throws(DarkroomError) -> [UInt8] {
    let bands = image.bands
    let pixels = try image.pixels()
    guard bands != 3 else { return pixels }
    let count = pixels.count / max(1, bands)
    var rgb = [UInt8](repeating: 0, count: count * 3)
    for i in 0..<count {
      for c in 0..<3 { rgb[3 * i + c] = pixels[i * bands + (bands >= 3 ? c : 0)] }
    }
    return rgb
  }
}
