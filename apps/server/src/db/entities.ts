/** Every entity the ORM knows; each module adds its own here. */
import { UserSchema } from '../modules/identity/identity.entities.js';
import { StoreMemberSchema, StoreSchema } from '../modules/stores/stores.entities.js';

export const ENTITIES = [UserSchema, StoreSchema, StoreMemberSchema];
