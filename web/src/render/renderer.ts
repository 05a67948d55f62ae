// Which renderer draws the map. sigma's WebGL is the one for a GPU; where WebGL is rendered in
// software (SwiftShader, llvmpipe: headless browsers, VMs, remote desktops) every frame of a
// WebGL canvas costs ~100 ms however little is on it, and Canvas 2D (Skia's CPU raster) draws the
// same map in a few. `?renderer=webgl` or `?renderer=canvas` in the address chooses by hand.

export type RendererKind = "webgl" | "canvas";

const SOFTWARE = /swiftshader|llvmpipe|softpipe|software|microsoft basic render/i;

/** The renderer for an address's `renderer` parameter and the WebGL renderer's name (null: no WebGL). */
export function chooseRenderer(param: string | null, glRenderer: string | null): RendererKind {
  if (param === "webgl" || param === "canvas") return param;
  return glRenderer === null || SOFTWARE.test(glRenderer) ? "canvas" : "webgl";
}

/** The browser's WebGL renderer (WEBGL_debug_renderer_info's unmasked name where it is given). */
export function webglRenderer(): string | null {
  const canvas = document.createElement("canvas");
  const gl = canvas.getContext("webgl2") ?? canvas.getContext("webgl");
  if (!gl) return null;
  const info = gl.getExtension("WEBGL_debug_renderer_info");
  const name = String(info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
  gl.getExtension("WEBGL_lose_context")?.loseContext();
  return name;
}
