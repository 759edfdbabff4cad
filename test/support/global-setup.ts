// Placeholder: replaced by the migrated-template setup once the store exists.
export default async function setup() {}
