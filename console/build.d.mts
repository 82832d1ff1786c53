import type { BuildOptions } from "esbuild"

/** esbuild's options for the web console's script, for the package rooted at `root`. */
export declare const consoleBuildOptions: (root: string) => BuildOptions
