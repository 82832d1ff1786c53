/** Greetings, thanks and fillers carry nothing worth remembering. */
const FILLER = new Set(
  ("ok okay k kk yes yeah yep yup no nope nah sure cool great nice good fine awesome wow omg lol lmao haha hahaha hehe " +
    "thanks thank thx ty you u so much very really hi hello hey hiya bye goodbye see ya later morning night evening afternoon " +
    "day have a an the too oh ah hmm um uh well alright right true totally exactly indeed agreed same glad happy to hear it " +
    "that's thats amazing love sounds me and it's its is was will do what how are doing sweet perfect congrats congratulations " +
    "welcome np problem of course definitely absolutely").split(" ")
)

export const isInformative = (text: string) => {
  const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []
  if (words.length === 0) return false
  return words.some((word) => !FILLER.has(word))
}
