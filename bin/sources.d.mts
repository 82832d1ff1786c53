/** The newest modification time (ms) among the sources dist/ is built from. */
export declare const newestSource: (root: string) => number
/** Whether dist/ was built after every source; false when it is missing or unreadable. */
export declare const bundleIsCurrent: (root: string) => boolean
