import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An edit another program made, as its XMP keeps it: Lightroom's and Camera Raw's `crs:`
/// settings, in the file or in a sidecar (`NAME.xmp`, `NAME.EXT.xmp`, which win), read into
/// a Darkroom graph (issue 30).
///
/// Each setting is rendered as it means, approximated (Darkroom's tone filter is not Camera
/// Raw's), or not understood, and ``rendered``, ``approximated`` and ``ignored`` say which:
///
/// | Camera Raw | Darkroom | |
/// |---|---|---|
/// | `HasCrop`, `CropLeft`/`Top`/`Right`/`Bottom` (fractions of the upright original) | `crop` x y width height | rendered |
/// | `CropAngle` (degrees: the crop's rectangle, of its own size, turned about its centre) | `crop angle`, the rectangle in the straightened image | approximated |
/// | `ConvertToGrayscale` | `tone saturation=-1` (Rec. 709 luma) | rendered |
/// | `Exposure2012` (stops) | `tone exposure`, linear light | approximated |
/// | `Contrast2012`, `Highlights2012`, `Shadows2012`, `Saturation` (-100 to 100) | `tone contrast`, `highlights`, `shadows`, `saturation` (/ 100) | approximated |
/// | `Whites2012`, `Blacks2012` | `light whites`, `blacks` (/ 200) | approximated |
/// | `IncrementalTemperature`, `IncrementalTint` | `balance temperature` (0.7 mired a step), `tint` (/ 100) | approximated |
/// | `Vibrance`, `Clarity2012`, `Texture` | `vibrance`, `definition`, `texture` (/ 100) | approximated |
/// | `Sharpness` (0 to 150), `SharpenRadius`, `SharpenDetail` | `sharpen amount` (/ 50), `radius`, `detail` (/ 100) | approximated |
/// | `LuminanceSmoothing`, `ColorNoiseReduction` | `denoise luminance`, `colour` (/ 100) | approximated |
/// | `PostCropVignetteAmount`, `Midpoint`, `Feather`, `Roundness` | `vignette` (/ 100) | approximated |
/// | `GrainAmount` | `grain amount` (/ 100) | approximated |
/// | `HueAdjustmentRed` ... `LuminanceAdjustmentMagenta` | `hsl red-hue` ... `magenta-luminance` (/ 100) | approximated |
/// | `PerspectiveVertical`, `PerspectiveHorizontal` | `perspective` (/ -100), before the crop | approximated |
/// | `ToneCurvePV2012` and its `Red`, `Green`, `Blue` (points 0 to 255) | `curve rgb`, `red`, `green`, `blue` | approximated |
/// | anything else not at its neutral value (`Dehaze`, masks, an absolute `Temperature`, ...) | nothing | ignored |
///
/// `AlreadyApplied="True"` says the pixels are the edit's result already (a JPEG exported
/// with its settings): nothing is rendered for it.
package struct ForeignEdit: Sendable, Equatable, Codable {
  /// `lightroom`: Lightroom's and Camera Raw's settings.
  package var program: String
  /// Where the settings were read: `XMP` (the file's own packet) or a sidecar's name.
  package var source: String
  /// What Darkroom renders for it (empty when ``alreadyApplied``).
  package var graph: FilterGraph
  /// Settings rendered as they mean, approximated, and present but not rendered.
  package var rendered: [String]
  package var approximated: [String]
  package var ignored: [String]
  /// The file's pixels are the edit's result already (`crs:AlreadyApplied`).
  package var alreadyApplied: Bool

  /// Settings that describe rather than change: never listed as ignored.
  static let structural: Set<String> = [
    "Version", "ProcessVersion", "HasSettings", "HasCrop", "AlreadyApplied", "CropWidth",
    "CropHeight", "CropUnits", "CropConstrainToWarp", "CropConstrainAspectRatio", "RawFileName",
    "WhiteBalance", "CameraProfile", "CameraProfileDigest", "LookName", "SupportsAmount",
    "SupportsColor", "SupportsMonochrome", "SupportsHighDynamicRange", "SupportsNormalDynamicRange",
    "SupportsSceneReferred", "SupportsOutputReferred", "ToneCurveName", "ToneCurveName2012",
    "OverrideLookVignette", "Look", "Name", "Amount", "UUID", "Copyright", "Group", "Parameters",
  ]

  /// Lightroom's edit in `settings`, for an image `width` x `height` upright; nil when they
  /// have no Camera Raw settings that change anything.
  static func lightroom(_ settings: ForeignSettings, width: Int, height: Int) -> ForeignEdit? {
    let names = Array(settings.values.keys)
    guard !names.isEmpty else { return nil }
    let source = settings.source
    func text(_ name: String) -> String? { settings.values[name] }
    func number(_ name: String) -> Double? {
      text(name).flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }.flatMap {
        $0.isFinite ? $0 : nil
      }
    }
    var edit = ForeignEdit(
      program: "lightroom", source: source, graph: FilterGraph(nodes: []), rendered: [],
      approximated: [], ignored: [], alreadyApplied: settings.flag("AlreadyApplied"))
    var nodes: [FilterNode] = []
    var handled: Set<String> = []

    // The crop: fractions of the upright original; an angle turns its rectangle.
    let sides = ["CropLeft", "CropTop", "CropRight", "CropBottom"]
    if settings.flag("HasCrop") {
      handled.formUnion(sides + ["CropAngle"])
      let values = sides.map(number)
      let angle = number("CropAngle") ?? 0
      if let left = values[0], let top = values[1], let right = values[2],
        let bottom = values[3], 0 <= left, left < right, right <= 1, 0 <= top, top < bottom,
        bottom <= 1, abs(angle) <= 45,
        let node = cropNode(
          left: left, top: top, right: right, bottom: bottom, angle: angle, width: width,
          height: height)
      {
        nodes.append(node)
        edit.rendered += ["HasCrop"] + sides
        if angle != 0 { edit.approximated.append("CropAngle") }
      } else {
        edit.ignored += ["HasCrop"] + sides.filter { text($0) != nil }
        if text("CropAngle") != nil { edit.ignored.append("CropAngle") }
      }
    }

    // Grayscale, then every other setting scaled onto a parameter of a filter
    // (approximated: Darkroom's filters are not Camera Raw's).
    var params: [String: [String: FilterValue]] = [:]
    if settings.flag("ConvertToGrayscale") {
      params["tone", default: [:]]["saturation"] = .number(-1)
      edit.rendered.append("ConvertToGrayscale")
    }
    handled.insert("ConvertToGrayscale")
    for mapping in LightroomMapping.all {
      guard let value = number(mapping.setting) else { continue }
      handled.insert(mapping.setting)
      guard value != 0 || !mapping.leads else { continue }
      // Grayscale wins over a saturation of its own.
      if mapping.parameter == "saturation", params["tone"]?["saturation"] != nil {
        edit.ignored.append(mapping.setting)
        continue
      }
      let mapped = mapping.value(value)
      guard
        let parameter = Filters.named(mapping.filter)?.parameters.first(where: {
          $0.name == mapping.parameter
        }),
        case .number(let range) = parameter.kind, range.contains(mapped)
      else {
        edit.ignored.append(mapping.setting)
        continue
      }
      params[mapping.filter, default: [:]][mapping.parameter] = .number(mapped)
      edit.approximated.append(mapping.setting)
    }
    // The tone curves: "x, y" points from 0 to 255.
    for (setting, parameter) in LightroomMapping.curves {
      let points = settings.values[setting].flatMap(LightroomMapping.curvePoints)
      guard settings.values[setting] != nil else { continue }
      handled.insert(setting)
      guard let points, points != "0:0,1:1" else {
        if points == nil { edit.ignored.append(setting) }
        continue
      }
      params["curve", default: [:]][parameter] = .text(points)
      edit.approximated.append(setting)
    }
    // A filter's secondary settings (a radius, a midpoint) go only with its leading one.
    for mapping in LightroomMapping.all where !mapping.leads {
      if params[mapping.filter]?.count == 1, params[mapping.filter]?[mapping.parameter] != nil {
        params[mapping.filter] = nil
        edit.approximated.removeAll { $0 == mapping.setting }
      }
    }
    for filter in LightroomMapping.order {
      guard let values = params[filter], let node = try? FilterNode(filter, values) else {
        continue
      }
      if filter == "perspective" { nodes.insert(node, at: 0) } else { nodes.append(node) }
    }

    // Anything else that is not at its neutral value is kept in the file, not rendered.
    for name in names.sorted()
    where !handled.contains(name) && !structural.contains(name) && !isNeutral(text(name)) {
      edit.ignored.append(name)
    }
    if edit.alreadyApplied {
      edit.ignored = (edit.rendered + edit.approximated + edit.ignored).sorted()
      edit.rendered = []
      edit.approximated = []
    } else {
      edit.graph = FilterGraph(nodes: nodes)
    }
    guard !edit.graph.nodes.isEmpty || !edit.ignored.isEmpty else { return nil }
    return edit
  }

  /// A value that changes nothing: none, zero, `False`.
  static func isNeutral(_ text: String?) -> Bool {
    guard let text, !text.isEmpty else { return true }
    if let number = Double(text), number == 0 { return true }
    return text.lowercased() == "false"
  }

  /// Darkroom's crop for Lightroom's: a rectangle of (right - left) x (bottom - top) of the
  /// upright original (fractions of its width and height), centred where those edges say,
  /// turned `angle` degrees about its centre with the image (Lightroom's straighten, read as
  /// clockwise). Darkroom's `crop angle` straightens first, keeping the largest centred
  /// rectangle of the image's shape, and takes fractions of that: the rectangle is given
  /// there. nil when it does not lie within it (by more than a pixel).
  static func cropNode(
    left: Double, top: Double, right: Double, bottom: Double, angle: Double, width: Int,
    height: Int
  ) -> FilterNode? {
    guard angle != 0 else {
      return try? FilterNode(
        "crop",
        [
          "x": .number(left), "y": .number(top), "width": .number(right - left),
          "height": .number(bottom - top),
        ])
    }
    let (w, h) = (Double(width), Double(height))
    guard w > 0, h > 0 else { return nil }
    let t = angle * .pi / 180
    let (c, s) = (cos(t), sin(t))
    // The rectangle's centre, from the image's, turned clockwise (y grows downwards).
    let (dx, dy) = ((left + right) / 2 * w - w / 2, (top + bottom) / 2 * h - h / 2)
    let centre = (dx * c - dy * s, dx * s + dy * c)
    let (cw, ch) = ((right - left) * w, (bottom - top) * h)
    let inner = CropFilter.innerSize(width: w, height: h, degrees: angle)
    let x0 = centre.0 + inner.width / 2 - cw / 2
    let y0 = centre.1 + inner.height / 2 - ch / 2
    let slack = 1.0
    guard x0 >= -slack, y0 >= -slack, x0 + cw <= inner.width + slack,
      y0 + ch <= inner.height + slack
    else { return nil }
    let x = max(0, x0) / inner.width
    let y = max(0, y0) / inner.height
    return try? FilterNode(
      "crop",
      [
        "x": .number(x), "y": .number(y),
        "width": .number(min(cw / inner.width, 1 - x)),
        "height": .number(min(ch / inner.height, 1 - y)), "angle": .number(angle),
      ])
  }
}

extension ForeignEdit {
  /// The edit as `info --json` prints it (docs/info-json.md).
  package struct Printed: Encodable, Sendable {
    var program, source: String
    var alreadyApplied: Bool
    var filters: String
    var graph: FilterGraph
    var rendered, approximated, ignored: [String]
  }

  /// The program as people name it: `Lightroom`, `darktable`.
  package var programName: String {
    ForeignSettings(program: program, source: source, values: [:], instances: []).programName
  }

  /// The filters as `--filter` takes them, `|` between them (empty for none).
  package var filters: String { graph.nodes.map(\.text).joined(separator: " | ") }

  package var printed: Printed {
    Printed(
      program: program, source: source, alreadyApplied: alreadyApplied, filters: filters,
      graph: graph, rendered: rendered, approximated: approximated, ignored: ignored)
  }
}

extension ForeignEdit {
  /// The graph an XMP file names (`edit --adjustment x.xmp`): Darkroom's adjustment data in
  /// it, exactly, when it has some (`darkroom:AdjustmentData`, as `adjustments --xmp` and
  /// every edited file write it); else Lightroom's settings (an angled crop is left out: the
  /// image it was made for is not known).
  ///
  /// - Throws: `invalidArgument` naming `source` for a packet that is not XMP, or that has
  ///   neither.
  package static func graph(xmp bytes: [UInt8], source: String) throws(DarkroomError)
    -> FilterGraph
  {
    let packet: XMPPacket
    do {
      packet = try XMPPacket(bytes)
    } catch {
      throw DarkroomError(.invalidArgument, file: source, "not an XMP packet: \(error.description)")
    }
    if let json = packet.text(XMPPacket.darkroom, "AdjustmentData") {
      struct Embedded: Decodable { var graph: FilterGraph }
      do {
        return try JSONDecoder().decode(Embedded.self, from: Data(json.utf8)).graph
      } catch let error as DarkroomError {
        throw error.about(source)
      } catch {
        throw DarkroomError(
          .invalidArgument, file: source, "its darkroom:AdjustmentData is not adjustment data")
      }
    }
    guard let settings = ForeignSettings.read(packet, source: source),
      let edit = ForeignEdit(settings, width: 0, height: 0), !edit.graph.nodes.isEmpty
    else {
      throw DarkroomError(
        .invalidArgument, file: source,
        "has neither Darkroom adjustment data nor Lightroom settings Darkroom renders")
    }
    return edit.graph
  }

  /// An XMP sidecar for `graph` (an edit of an image `width` x `height` upright) that
  /// Lightroom reads: its crop (fractions, and angle), grayscale and tone as `crs:` settings
  /// (the inverse of ``lightroom(_:source:width:height:)``; `ProcessVersion` 11.0,
  /// `HasSettings`, `AlreadyApplied` False), with `adjustmentData` (Darkroom's exact JSON) in
  /// Darkroom's namespace, so that a round trip through the sidecar loses nothing. What
  /// Camera Raw has no setting for (turns, flips, presets' curves) is in Darkroom's part
  /// only.
  package static func sidecar(
    for graph: FilterGraph, adjustmentData: [UInt8], width: Int, height: Int
  ) -> [UInt8] {
    var settings: [(String, String)] = [
      ("Version", "15.0"), ("ProcessVersion", "11.0"), ("HasSettings", "True"),
      ("AlreadyApplied", "False"),
    ]
    func number(_ value: Double, sign: Bool = true) -> String {
      let text = String(format: "%.6g", value)
      return sign && value > 0 ? "+" + text : text
    }
    let crops = graph.nodes.filter { $0.op == "crop" }
    // A crop of a warped image has no place on the original's (Camera Raw crops that).
    let warped = graph.nodes.prefix { $0.op != "crop" }.contains { $0.op == "warp" }
    if crops.count == 1, !warped, let crop = crops.first,
      let corners = cropCorners(crop, width: width, height: height)
    {
      settings += [
        ("HasCrop", "True"), ("CropLeft", number(corners.left, sign: false)),
        ("CropTop", number(corners.top, sign: false)),
        ("CropRight", number(corners.right, sign: false)),
        ("CropBottom", number(corners.bottom, sign: false)), ("CropAngle", number(corners.angle)),
      ]
    } else {
      settings.append(("HasCrop", "False"))
    }
    var tone: [String: Double] = [:]
    for node in graph.nodes where node.op == "tone" {
      for (name, value) in node.params {
        if case .number(let v) = value, v != 0 { tone[name, default: 0] += v }
      }
    }
    let grey = graph.nodes.contains { $0.op == "noir" } || (tone["saturation"] ?? 0) <= -1
    settings.append(("ConvertToGrayscale", grey ? "True" : "False"))
    // The last node of each filter, its parameters back on Camera Raw's scales.
    var last: [String: FilterNode] = [:]
    for node in graph.nodes { last[node.op] = node }
    for mapping in LightroomMapping.all {
      let value: Double
      if mapping.filter == "tone" {
        guard let sum = tone[mapping.parameter], !(mapping.parameter == "saturation" && grey)
        else { continue }
        value = sum
      } else {
        guard case .number(let v)? = last[mapping.filter]?.params[mapping.parameter] else {
          continue
        }
        value = v
      }
      guard let setting = mapping.setting(value) else { continue }
      settings.append((mapping.setting, number(setting, sign: mapping.signed)))
    }
    var sequences: [(String, [String])] = []
    for (setting, parameter) in LightroomMapping.curves {
      guard case .text(let text)? = last["curve"]?.params[parameter],
        let points = FilterParameter.points(text)
      else { continue }
      sequences.append(
        (
          setting,
          points.map { "\(Int(($0.x * 255).rounded())), \(Int(($0.y * 255).rounded()))" }
        ))
    }
    let attributes = settings.map { "   crs:\($0.0)=\"\(XMPSidecar.escaped($0.1))\"" }
      .joined(separator: "\n")
    let elements = sequences.map { setting, items in
      "   <crs:\(setting)>\n    <rdf:Seq>\n"
        + items.map { "     <rdf:li>\(XMPSidecar.escaped($0))</rdf:li>\n" }.joined()
        + "    </rdf:Seq>\n   </crs:\(setting)>\n"
    }.joined()
    // Curves are sequences: elements inside the description, which then closes apart.
    let close = elements.isEmpty ? "/>" : ">\n" + elements + "    </rdf:Description>"
    let packet = """
      <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
      <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Darkroom">
       <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about=""
          xmlns:crs="\(ForeignSettings.crs)"
          xmlns:darkroom="\(XMPPacket.darkroom)"
      \(attributes)
          darkroom:AdjustmentData="\(XMPSidecar.escaped(String(decoding: adjustmentData, as: UTF8.self)))"\(close)
       </rdf:RDF>
      </x:xmpmeta>
      <?xpacket end="w"?>

      """
    return Array(packet.utf8)
  }

  /// Lightroom's corners and angle for a Darkroom crop of an image `width` x `height`
  /// upright: the inverse of ``cropNode(left:top:right:bottom:angle:width:height:)``; nil for
  /// a crop it cannot place (pixels or an aspect ratio on an image of unknown size).
  static func cropCorners(_ node: FilterNode, width: Int, height: Int)
    -> (left: Double, top: Double, right: Double, bottom: Double, angle: Double)?
  {
    func value(_ name: String) -> Double? {
      if case .number(let v)? = node.params[name] { return v } else { return nil }
    }
    let angle = value("angle") ?? 0
    let pixels = node.params["unit"] == .text("px")
    // Fractions of the image itself: the same in Lightroom's terms, whatever its size.
    if angle == 0, !pixels, let x = value("x"), let y = value("y"), let cw = value("width"),
      let ch = value("height")
    {
      return (x, y, x + cw, y + ch, 0)
    }
    let (w, h) = (Double(width), Double(height))
    guard w > 0, h > 0 else { return nil }
    let inner =
      angle == 0 ? (width: w, height: h) : CropFilter.innerSize(width: w, height: h, degrees: angle)
    // The rectangle in the straightened image, in pixels.
    let rect: (x: Double, y: Double, w: Double, h: Double)
    if let x = value("x"), let y = value("y"), let cw = value("width"), let ch = value("height") {
      if pixels {
        rect = (x, y, cw, ch)
      } else {
        rect = (x * inner.width, y * inner.height, cw * inner.width, ch * inner.height)
      }
    } else if case .text(let text)? = node.params["aspect"], let ratio = FilterParameter.ratio(text)
    {
      let cw = min(inner.width, inner.height * ratio)
      let ch = cw / ratio
      rect = ((inner.width - cw) / 2, (inner.height - ch) / 2, cw, ch)
    } else {
      rect = (0, 0, inner.width, inner.height)
    }
    guard angle != 0 else {
      return (rect.x / w, rect.y / h, (rect.x + rect.w) / w, (rect.y + rect.h) / h, 0)
    }
    // The centre, back from the straightened image to the original (anticlockwise); the
    // size is the rectangle's own.
    let t = -angle * .pi / 180
    let (c, s) = (cos(t), sin(t))
    let (dx, dy) = (rect.x + rect.w / 2 - inner.width / 2, rect.y + rect.h / 2 - inner.height / 2)
    let centre = (dx * c - dy * s + w / 2, dx * s + dy * c + h / 2)
    return (
      (centre.0 - rect.w / 2) / w, (centre.1 - rect.h / 2) / h, (centre.0 + rect.w / 2) / w,
      (centre.1 + rect.h / 2) / h, angle
    )
  }
}

extension ForeignEdit {
  /// Modules darktable runs on every image that change nothing a Darkroom graph could say
  /// (input and output colour, display encoding): never listed as ignored.
  static let darktablePipeline: Set<String> = [
    "rawprepare", "demosaic", "colorin", "colorout", "gamma", "dither", "flip", "crop",
  ]

  /// darktable's edit in `settings` (its sidecar, `NAME.EXT.xmp`) on an image `width` x
  /// `height` upright: its `crop` (left, top, right and bottom edges as fractions of the
  /// upright image, little-endian floats in `params`), `exposure` and (not on a RAW)
  /// `temperature` are rendered; `ashift` (rotate and perspective) is rendered as a `warp`
  /// (DarktableAshift.swift); `flip` is rendered as the turn from the upright image (its
  /// EXIF `orientation` applied) to darktable's (the stored pixels turned its own way); its
  /// detail and effect modules (sharpen, colour balance, curves, shadows and highlights,
  /// local contrast, monochrome, vignette) as `DarktableModules.swift` reads them, in
  /// darktable's pipeline order after the colour;
  /// every other enabled module, and a second instance of any, is listed as not rendered.
  /// nil when there is nothing.
  static func darktable(
    _ settings: ForeignSettings, width: Int, height: Int, raw: Bool = false,
    orientation: Orientation = .up
  ) -> ForeignEdit? {
    var edit = ForeignEdit(
      program: "darktable", source: settings.source, graph: FilterGraph(nodes: []), rendered: [],
      approximated: [], ignored: settings.instances, alreadyApplied: false)
    var nodes: [FilterNode] = []
    // Colour, in darktable's pipeline order: white balance, then exposure.
    var temperature: [FilterNode] = []
    var exposure: [FilterNode] = []
    var flips: [FilterNode] = []
    // Detail and effects, by their place in darktable's pipeline (after the colour).
    var effects: [(order: Int, nodes: [FilterNode])] = []
    // The size the vignette sees: turned by the flip and cut by the crop (both run first).
    var (swapped, cut) = (false, (width: 1.0, height: 1.0))
    var vignette: [UInt32]?
    // darktable's rotate and perspective: first, on the pixels as stored.
    var ashift: [FilterNode] = []
    var warped = (width: 1.0, height: 1.0)
    func effect(_ operation: String, _ order: Int, _ module: DarktableModule?) {
      guard let module else {
        edit.ignored.append(operation)
        return
      }
      effects.append((order, module.nodes))
      if module.nodes.isEmpty { return }
      if module.exact {
        edit.rendered.append(operation)
      } else {
        edit.approximated.append(operation)
      }
    }
    for (operation, entry) in settings.values.sorted(by: { $0.key < $1.key }) {
      let enabled = !entry.hasPrefix("0")
      let params = darktableParams(String(entry.dropFirst(2)))
      switch operation {
      case "crop" where enabled:
        let edges = params.prefix(4).map { Double(Float(bitPattern: $0)) }
        if edges.count == 4, edges.allSatisfy({ $0.isFinite }), 0 <= edges[0],
          edges[0] < edges[2], edges[2] <= 1, 0 <= edges[1], edges[1] < edges[3], edges[3] <= 1
        {
          let (x, y) = (sixPlaces(edges[0]), sixPlaces(edges[1]))
          let (right, bottom) = (sixPlaces(edges[2]), sixPlaces(edges[3]))
          let whole = x == 0 && y == 0 && right == 1 && bottom == 1
          if !whole { cut = (right - x, bottom - y) }
          if !whole,
            let node = try? FilterNode(
              "crop",
              [
                "x": .number(x), "y": .number(y), "width": .number(sixPlaces(right - x)),
                "height": .number(sixPlaces(bottom - y)),
              ])
          {
            nodes.insert(node, at: 0)
            edit.rendered.append("crop")
          }
        } else {
          edit.ignored.append("crop")
        }
      case "exposure" where enabled:
        if let chosen = darktableExposure(params, raw: raw) {
          exposure = chosen
          if raw { edit.approximated.append("exposure") } else { edit.rendered.append("exposure") }
        } else {
          edit.ignored.append("exposure")
        }
      case "temperature" where enabled:
        if !raw, let chosen = darktableTemperature(params) {
          temperature = chosen
          edit.rendered.append("temperature")
        } else {
          edit.ignored.append("temperature")
        }
      case "flip" where enabled:
        // -1: as the EXIF says. Anything else (0 too) turns the stored pixels its own way,
        // instead of the EXIF: from the upright image, the EXIF's turn undone, then that.
        if let value = params.first, value != 0xFFFF_FFFF {
          if value < 8 {
            (flips, swapped) = darktableFlip(Int(value), exif: orientation)
            if !flips.isEmpty { edit.rendered.append("flip") }
          } else {
            edit.ignored.append("flip")
          }
        }
      case "sharpen" where enabled: effect(operation, 0, darktableSharpen(params))
      case "colorbalancergb" where enabled: effect(operation, 1, darktableColorBalance(params))
      case "rgbcurve" where enabled: effect(operation, 2, darktableRGBCurve(params))
      case "tonecurve" where enabled: effect(operation, 3, darktableToneCurve(params))
      case "shadhi" where enabled: effect(operation, 4, darktableShadowsHighlights(params))
      case "bilat" where enabled: effect(operation, 5, darktableLocalContrast(params))
      case "monochrome" where enabled: effect(operation, 6, darktableMonochrome(params))
      case "vignette" where enabled: vignette = params
      case "ashift" where enabled:
        let stored = orientation.swapsDimensions ? (height, width) : (width, height)
        if let module = darktableAshift(
          params, width: stored.0, height: stored.1, exif: orientation)
        {
          ashift = module.nodes
          if case .number(let w)? = module.nodes.first?.params["width"],
            case .number(let h)? = module.nodes.first?.params["height"]
          {
            warped = (w, h)
          }
          if !module.nodes.isEmpty {
            if raw { edit.approximated.append("ashift") } else { edit.rendered.append("ashift") }
          }
        } else {
          edit.ignored.append("ashift")
        }
      default:
        if enabled, !darktablePipeline.contains(operation), !edit.ignored.contains(operation) {
          edit.ignored.append(operation)
        }
      }
    }
    // White balance's white point and exposure's levels are one `light` (darktable keeps
    // values above white between its modules; two 8-bit steps would clip them between).
    if case .number(let whites1)? = temperature.last?.params["whites"],
      temperature.last?.op == "light", let levels = exposure.first, levels.op == "light",
      case .number(let whites2)? = levels.params["whites"],
      case .number(let blacks2)? = levels.params["blacks"]
    {
      let white1 = 1 - 0.5 * whites1
      let (white2, black2) = (1 - 0.5 * whites2, -0.5 * blacks2)
      if let merged = try? FilterNode(
        "light",
        [
          "whites": .number(sixPlaces(2 * (1 - white1 * white2))),
          "blacks": .number(sixPlaces(-2 * black2 * white1)),
        ])
      {
        temperature.removeLast()
        exposure = [merged]
      }
    }
    // The vignette is placed on the image as the flip and crop left it (read after both).
    if let vignette {
      let (w, h) =
        swapped
        ? (Double(height) * warped.height, Double(width) * warped.width)
        : (Double(width) * warped.width, Double(height) * warped.height)
      effect(
        "vignette", 7, darktableVignette(vignette, width: w * cut.width, height: h * cut.height))
    }
    // The flip turns the image before the crop, whose edges are of the turned image.
    nodes = ashift + flips + nodes + temperature + exposure
    nodes += effects.sorted { $0.order < $1.order }.flatMap(\.nodes)
    edit.graph = FilterGraph(nodes: nodes)
    guard !nodes.isEmpty || !edit.ignored.isEmpty else { return nil }
    return edit
  }

  /// darktable's `flip` orientation (bits: 1 top-bottom, 2 left-right, 4 swap the axes,
  /// after the flips), which darktable applies to the stored pixels instead of the EXIF's
  /// `exif`, as Darkroom's turns and flips of the upright image (as darktable-cli exports
  /// them): of the eight symmetries, each said in as few nodes as it takes, the one that
  /// takes the upright image to darktable's, found with ``Placement``'s algebra and the
  /// filters' own folding of turns and flips. Whether the result's axes are the upright
  /// image's swapped.
  static func darktableFlip(_ orientation: Int, exif: Orientation)
    -> (nodes: [FilterNode], swaps: Bool)
  {
    // On a 1x2 stand-in for the stored pixels: darktable's image (its flips, then the axes
    // swapped: a quarter turn and a mirror), and the upright one (the EXIF's).
    var wanted = Placement(storedWidth: 1, storedHeight: 2, orientation: .up)
    if orientation & 1 != 0 { wanted.flip(vertically: true) }
    if orientation & 2 != 0 { wanted.flip(vertically: false) }
    if orientation & 4 != 0 {
      wanted.turn(quarterTurns: 1)
      wanted.flip(vertically: false)
    }
    let upright = Placement(storedWidth: 1, storedHeight: 2, orientation: exif)
    let symmetries = [
      [], ["flip direction=horizontal"], ["flip direction=vertical"], ["rotate angle=180"],
      ["rotate angle=90"], ["rotate angle=270"], ["rotate angle=90", "flip direction=horizontal"],
      ["rotate angle=90", "flip direction=vertical"],
    ]
    for specs in symmetries {
      guard let graph = try? FilterGraph.parse(specs: specs) else { continue }
      var placed = upright
      for node in graph.nodes {
        try? node.definition?.folding(FilterArguments(values: node.params))?(&placed, nil)
      }
      if placed == wanted { return (graph.nodes, placed.uprightWidth != upright.uprightWidth) }
    }
    return ([], false)
  }

  /// darktable's `exposure` (params v5 and v6: mode, black, exposure, ...; v2: black,
  /// exposure, gain), manual mode only. It runs before the input profile: on a JPEG's
  /// encoded values, `(x - black) / (2^-exposure - black)`, which is exactly `light`'s
  /// levels (black point `black`, white point `2^-exposure`) where they reach (exposure
  /// -0.58 to +1, black -0.5 to 0.5); on a RAW's linear camera values, approximated by
  /// `tone exposure` (Darkroom's development is LibRaw's, not darktable's). nil otherwise.
  static func darktableExposure(_ params: [UInt32], raw: Bool) -> [FilterNode]? {
    let fields: (mode: UInt32, black: Float, exposure: Float)
    switch params.count {
    case 5, 6: fields = (params[0], Float(bitPattern: params[1]), Float(bitPattern: params[2]))
    case 3: fields = (0, Float(bitPattern: params[0]), Float(bitPattern: params[1]))
    default: return nil
    }
    let (black, stops) = (Double(fields.black), Double(fields.exposure))
    guard fields.mode == 0, black.isFinite, stops.isFinite else { return nil }
    if raw {
      guard black == 0, let node = try? FilterNode("tone", ["exposure": .number(sixPlaces(stops))])
      else { return nil }
      return [node]
    }
    if black == 0 && stops == 0 { return [] }
    let whites = sixPlaces(2 * (1 - pow(2, -stops)))
    guard
      let node = try? FilterNode(
        "light", ["whites": .number(whites), "blacks": .number(sixPlaces(-2 * black))])
    else { return nil }
    return [node]
  }

  /// darktable's `temperature` (params: red, green and blue multipliers, then a second
  /// green), on a JPEG's encoded values before the input profile: each channel's gain, as
  /// straight `curve`s of each channel scaled by the largest gain, then `light`'s white point
  /// at 1 / that gain (exact, for gains up to 2). nil for what it cannot say.
  static func darktableTemperature(_ params: [UInt32]) -> [FilterNode]? {
    guard params.count == 3 || params.count == 4 else { return nil }
    let gains = params.prefix(3).map { Double(Float(bitPattern: $0)) }
    guard gains.allSatisfy({ $0.isFinite && $0 > 0 }), let top = gains.max(), top <= 2 else {
      return nil
    }
    if gains.allSatisfy({ $0 == 1 }) { return [] }
    let scale = max(1, top)
    var curves: [String: FilterValue] = [:]
    for (channel, gain) in zip(["red", "green", "blue"], gains) where gain != scale {
      curves[channel] = .text("0:0,1:\(FilterValue.number(sixPlaces(gain / scale)))")
    }
    var nodes: [FilterNode] = []
    if !curves.isEmpty, let node = try? FilterNode("curve", curves) { nodes.append(node) }
    if scale > 1 {
      guard let node = try? FilterNode("light", ["whites": .number(sixPlaces(2 * (1 - 1 / scale)))])
      else { return nil }
      nodes.append(node)
    }
    return nodes
  }

  /// A value read from another program's settings, to six decimal places: the text a graph
  /// writes of it stays short (a float's 0.1 is not 0.100000001).
  static func sixPlaces(_ value: Double) -> Double { (value * 1e6).rounded() / 1e6 }

  /// darktable's `params`: hex digits, read as little-endian 32-bit words (empty for text
  /// that is not hex, or compressed, `gz...`).
  static func littleEndianWords(_ text: String) -> [UInt32] {
    let digits = Array(text.utf8)
    guard digits.count % 8 == 0, digits.count <= 4096 else { return [] }
    var words: [UInt32] = []
    for start in stride(from: 0, to: digits.count, by: 8) {
      var word: UInt32 = 0
      for byte in 0..<4 {
        guard let high = hexValue(digits[start + 2 * byte]),
          let low = hexValue(digits[start + 2 * byte + 1])
        else { return [] }
        word |= UInt32(high << 4 | low) << (8 * UInt32(byte))
      }
      words.append(word)
    }
    return words
  }
}

extension AssetMetadata {
  /// What Darkroom renders for the edit another program left (``foreignSettings``), placed on
  /// this image's upright size; nil for none, for one that changes nothing Darkroom could
  /// say, and for a file Darkroom edited (``darkroomEdited``: its pixels are its edit).
  package var foreignEdit: ForeignEdit? {
    guard !darkroomEdited else { return nil }
    return foreignSettings.flatMap {
      ForeignEdit(
        $0, width: displayWidth, height: displayHeight, raw: format == "raw",
        orientation: orientation.effective)
    }
  }

  /// ``foreignSettings`` when this image shows them: they make a ``foreignEdit`` that is not
  /// already applied to its pixels (as in a JPEG Lightroom exported). What the catalog keeps.
  package var shownForeignSettings: ForeignSettings? {
    guard !darkroomEdited, let settings = foreignSettings,
      settings.isShown(width: displayWidth, height: displayHeight)
    else { return nil }
    return settings
  }
}

extension ForeignSettings {
  /// Whether an image `width` x `height` upright shows these settings: they make a
  /// ``ForeignEdit`` that is not already applied to the pixels. Plain cases (Lightroom's
  /// `AlreadyApplied`, a crop, grayscale) are answered without building the edit, which a
  /// scan would otherwise do for every photo edited elsewhere.
  package func isShown(width: Int, height: Int) -> Bool {
    if program == "lightroom" {
      if flag("AlreadyApplied") { return false }
      // A crop is rendered or reported as ignored, grayscale is a tone node: an edit either way.
      if flag("HasCrop") || flag("ConvertToGrayscale") { return true }
    }
    return ForeignEdit(self, width: width, height: height).map { !$0.alreadyApplied } ?? false
  }
}

extension ForeignEdit {
  /// What Darkroom renders for `settings` on an image `width` x `height` upright (its
  /// size places an angled crop): nil when they change nothing Darkroom could say.
  package init?(
    _ settings: ForeignSettings, width: Int, height: Int, raw: Bool = false,
    orientation: Orientation = .up
  ) {
    guard
      let edit = settings.program == "darktable"
        ? Self.darktable(
          settings, width: width, height: height, raw: raw, orientation: orientation)
        : Self.lightroom(settings, width: width, height: height)
    else { return nil }
    self = edit
  }
}
