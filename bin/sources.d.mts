/** The newest modification time (ms) among the sources dist/ is built from. */
export declare const newestSource: (root: string) => number
